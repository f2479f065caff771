package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SecureCloud;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Push subscriptions in secure mode: each 4.x endpoint's rule over real mutual TLS, with a certificate per
 * caller from the {@link TestPki}, and delivery over https to a subscriber that itself requires the Event
 * Handler's client certificate.
 */
class SecurePushTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ACL = """
            publish   publisher  alarms
            subscribe subscriber alarms
            """;

    @TempDir
    static Path dir;
    private static SecureCloud cloud;
    private static TestPki pki;
    private static TestClient publisher;
    private static TestClient subscriber;
    private static TestClient sysop;
    private static TestClient authorization;

    @BeforeAll
    static void start() throws Exception {
        cloud = SecureCloud.start(dir, ACL);
        pki = cloud.pki();
        publisher = cloud.client("publisher");
        subscriber = cloud.client("subscriber");
        sysop = cloud.client("sysop");
        authorization = cloud.client("authorization");
    }

    @AfterAll
    static void stop() {
        cloud.close();
    }

    private static void assertRefused(int status, String reason, Reply reply) throws Exception {
        assertEquals(status, reply.statusCode(), reply.body());
        JsonNode error = JSON.readTree(reply.body());
        assertEquals("AUTH", error.path("exceptionType").asText(), reply.body());
        assertTrue(error.path("errorMessage").asText().contains(reason), reply.body());
    }

    private static String unsubscribe(String systemName) {
        return "/eventhandler/unsubscribe?event_type=alarms&system_name=" + systemName;
    }

    @Test
    void aSubscriberSubscribesAsItselfAndEventsArePushedOverMutualTls() throws Exception {
        try (StandInSubscriber endpoint = StandInSubscriber.healthyOverTls(pki)) {
            Reply subscribed = subscriber.post("/eventhandler/subscribe",
                    endpoint.subscription("subscriber", "alarms", ""));
            assertEquals(200, subscribed.statusCode(), subscribed.body());
            Reply published = publisher.post("/eventhandler/publish",
                    "{\"eventType\":\"alarms\",\"payload\":\"overheat\",\"source\":{\"systemName\":\"publisher\"}}");
            assertEquals(200, published.statusCode(), published.body());
            endpoint.awaitEvents(1);
            assertEquals(List.of("overheat"), endpoint.payloads());
            assertEquals(200, subscriber.send(new HttpDelete(subscriber.uri(unsubscribe("subscriber"))))
                    .statusCode());
        }
    }

    /**
     * POSTs to one subscriber reuse kept-alive TLS connections: a connection per POST (HttpClient tied each pooled
     * connection to the client certificate's principal, which no request presented) left thousands open and ran a
     * 4.x subscriber out of memory. Now at most two are open at any time (a POST may start before the connection of
     * the one before is back in the pool; the spare closes once idle), as {@code /metrics} shows.
     */
    @Test
    void pushesToOneSubscriberReuseTheirTlsConnections() throws Exception {
        int events = 1_000;
        double openBefore = sysop.metric("eventhandler_push_connections");
        double mostOpen = 0;
        try (StandInSubscriber endpoint = StandInSubscriber.healthyOverTls(pki)) {
            Reply subscribed = subscriber.post("/eventhandler/subscribe",
                    endpoint.subscription("subscriber", "alarms", ""));
            assertEquals(200, subscribed.statusCode(), subscribed.body());
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < events; i++) {
                Reply published = publisher.post("/eventhandler/publish", "{\"eventType\":\"alarms\",\"payload\":\"e"
                        + i + "\",\"source\":{\"systemName\":\"publisher\"}}");
                assertEquals(200, published.statusCode(), published.body());
                sent.add("e" + i);
                if (i % 100 == 0) {
                    mostOpen = Math.max(mostOpen, sysop.metric("eventhandler_push_connections"));
                }
            }
            endpoint.awaitEvents(events);
            assertEquals(sent, endpoint.payloads(), "every event once, in order");
            mostOpen = Math.max(mostOpen, sysop.metric("eventhandler_push_connections"));
            assertTrue(mostOpen >= 1 && mostOpen <= openBefore + 2, "at most 2 open at a time: " + mostOpen + " ("
                    + openBefore + " before, kept alive to the other tests' subscribers)");
            assertTrue(endpoint.connections() <= events / 50, events + " POSTs came on " + endpoint.connections()
                    + " connections");
            assertEquals(200, subscriber.send(new HttpDelete(subscriber.uri(unsubscribe("subscriber"))))
                    .statusCode());
        }
    }

    @Test
    void subscribingForAnotherSystemIsForbidden() throws Exception {
        try (StandInSubscriber endpoint = StandInSubscriber.healthy()) {
            assertRefused(403, "subscriber", publisher.post("/eventhandler/subscribe",
                    endpoint.subscription("subscriber", "alarms", "")));
        }
    }

    @Test
    void theAclDecidesWhichTypesASystemMaySubscribeTo() throws Exception {
        try (StandInSubscriber endpoint = StandInSubscriber.healthy()) {
            assertRefused(403, "humidity", subscriber.post("/eventhandler/subscribe",
                    endpoint.subscription("subscriber", "humidity", "")));
        }
    }

    @Test
    void unsubscribingAnotherSystemIsForbidden() throws Exception {
        assertRefused(403, "subscriber",
                publisher.send(new HttpDelete(publisher.uri(unsubscribe("subscriber")))));
    }

    @Test
    void managementIsForSysopOnly() throws Exception {
        assertRefused(403, "sysop", subscriber.get("/eventhandler/mgmt/subscriptions"));
        Reply listed = sysop.get("/eventhandler/mgmt/subscriptions");
        assertEquals(200, listed.statusCode(), listed.body());
        assertTrue(JSON.readTree(listed.body()).has("count"), listed.body());
    }

    @Test
    void authorizationUpdatesAreForTheAuthorizationSystemOnly() throws Exception {
        String update = "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"payload\":\"7\","
                + "\"source\":{\"systemName\":\"authorization\"}}";
        assertRefused(403, "authorization", subscriber.post("/eventhandler/publish/authupdate", update));
        Reply accepted = authorization.post("/eventhandler/publish/authupdate", update);
        assertEquals(200, accepted.statusCode(), accepted.body());
    }

    @Test
    void aSubscriptionMadeWhileTheAuthorizationSystemIsDownIsRefusedUntilItAnswers() throws Exception {
        int port = TestServer.freePort();
        try (TestServer guarded = TestServer.start(pki.context("publisher"), pki.serverSettings(
                     "security.authorization.enabled", "true",
                     "security.authorization.uri", "https://127.0.0.1:" + port + "/authorization",
                     "security.authorization.start-retries", "0", "security.authorization.retry-seconds", "1"));
             TestClient subscribing = guarded.client(pki.context("subscriber"));
             StandInSubscriber endpoint = StandInSubscriber.healthyOverTls(pki)) {
            String subscription = endpoint.subscription("subscriber", "alarms", "");
            Reply refused = subscribing.post("/eventhandler/subscribe", subscription);
            assertEquals(503, refused.statusCode(), refused.body());
            try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, port)) {
                authorization.authorize("subscriber", "publisher");
                Await.until("subscribing works once the Authorization system answers", Duration.ofSeconds(10),
                        () -> subscribing.post("/eventhandler/subscribe", subscription).statusCode() == 200);
                Reply published = guarded.post("/eventhandler/publish",
                        "{\"eventType\":\"alarms\",\"payload\":\"back\",\"source\":{\"systemName\":\"publisher\"}}");
                assertEquals(200, published.statusCode(), published.body());
                endpoint.awaitEvents(1);
                assertEquals(List.of("back"), endpoint.payloads());
            }
        }
    }
}

package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The Arrowhead Authorization system names the publishers a subscriber may receive events from; here a
 * stand-in over mutual TLS plays it.
 */
class AuthorizationSystemTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final TestPki pki = TestPki.get();

    private TestServer start(String uri, String... more) {
        List<String> settings = new ArrayList<>(List.of("security.authorization.enabled", "true",
                "security.authorization.uri", uri, "security.authorization.start-retries", "0",
                "security.authorization.retry-seconds", "1"));
        settings.addAll(List.of(more));
        return TestServer.start(pki.context("publisher"), pki.serverSettings(settings.toArray(String[]::new)));
    }

    private static String event(String type, String source) {
        return "{\"eventType\":\"" + type + "\",\"payload\":\"from " + source + "\",\"source\":{\"systemName\":\""
                + source + "\"}}";
    }

    @Test
    void aSubscriberReceivesOnlyFromItsAuthorizedPublishers() throws Exception {
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer server = start(authorization.uri().toString());
             TestClient subscriber = server.client(pki.context("subscriber"));
             TestClient other = server.client(pki.context("other"))) {
            authorization.authorize("subscriber", "publisher");
            try (SseStream stream = subscriber.subscribe("?eventType=temperature")) {
                assertEquals(200, other.post("/eventhandler/publish", event("temperature", "other")).statusCode());
                assertEquals(200, server.post("/eventhandler/publish", event("temperature", "publisher")).statusCode());
                assertEquals("\"from publisher\"", stream.nextEvent(WAIT).data()
                        .replaceAll(".*\"payload\":(\"[^\"]*\").*", "$1"));
            }
            // As the 4.x Event Handler asks: the consumer, and null publishers for "all of them".
            assertEquals("{\"consumer\":{\"systemName\":\"subscriber\"},\"publishers\":null}",
                    authorization.checks().get(0));
            assertTrue(authorization.callers().get(0).startsWith("CN=eventhandler."), authorization.callers().toString());
            Reply refused = subscriber.get("/eventhandler/events?eventType=temperature&source=other");
            assertEquals(403, refused.statusCode());
            assertTrue(refused.body().contains("to receive events from none of the sources [other]"), refused.body());
            assertEquals(1, authorization.checks().size(), "the answer is kept per subscriber");
        }
    }

    @Test
    void aSubscriberWithoutAuthorizedPublishersIsRefused() {
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer server = start(authorization.uri().toString());
             TestClient other = server.client(pki.context("other"))) {
            Reply refused = other.get("/eventhandler/events?eventType=temperature");
            assertEquals(403, refused.statusCode());
            assertTrue(refused.body().contains("authorizes system 'other' to receive events from no publisher"),
                    refused.body());
        }
    }

    /** The query parameter that names an insecure stream's subscriber may only repeat the certificate's name. */
    @Test
    void aSecureStreamMayNameOnlyItsOwnSystem() throws Exception {
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer server = start(authorization.uri().toString());
             TestClient subscriber = server.client(pki.context("subscriber"))) {
            authorization.authorize("subscriber", "publisher");
            assertEquals(200, subscriber.streamStatus("?eventType=temperature&subscriber=Subscriber"));
            assertEquals(403, subscriber.streamStatus("?eventType=temperature&subscriber=other"));
            Reply refused = subscriber.get("/eventhandler/events?eventType=temperature&subscriber=other");
            assertTrue(refused.body().contains("is 'other' but the client certificate names 'subscriber'"),
                    refused.body());
        }
    }

    @Test
    void unreachableAtStartItFailsClosedUntilItAnswers() throws Exception {
        int port = TestServer.freePort();
        try (TestServer server = start("https://127.0.0.1:" + port + "/authorization");
             TestClient subscriber = server.client(pki.context("subscriber"))) {
            assertEquals(403, subscriber.streamStatus("?eventType=temperature"), "fail closed");
            try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, port)) {
                authorization.authorize("subscriber", "publisher");
                Await.until("the background retry finds the Authorization system", WAIT,
                        () -> status(subscriber) == 200);
            }
        }
    }

    private static int status(TestClient client) {
        try {
            return client.streamStatus("?eventType=temperature");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    @Test
    void anAuthorizationChangeIsAskedAgain() {
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             AuthorizationSystem system = AuthorizationSystem.connect(authorization.uri(),
                     pki.context(TestPki.SERVER), 0, Duration.ofSeconds(1))) {
            PublisherAuthorization rules = new PublisherAuthorization(Authorizer.INSECURE, system);
            authorization.authorize("subscriber", "publisher");
            assertEquals(Set.of("publisher"), rules.authorizedPublishers("subscriber").orElseThrow());
            authorization.authorize("subscriber", "publisher", "other");
            assertEquals(Set.of("publisher"), rules.authorizedPublishers(SystemRequest.named("Subscriber"))
                    .orElseThrow(), "kept per subscriber (names are case-insensitive) until a change is announced");
            rules.authorizationChanged();
            assertEquals(Set.of("publisher", "other"), rules.authorizedPublishers("subscriber").orElseThrow());
            assertEquals(2, authorization.checks().size());
        }
    }
}

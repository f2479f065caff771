package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    void unreachableAtStartANewSubscriberIsRefusedUntilItAnswers() throws Exception {
        int port = TestServer.freePort();
        try (TestServer server = start("https://127.0.0.1:" + port + "/authorization");
             TestClient subscriber = server.client(pki.context("subscriber"))) {
            SseStream.RefusedException refused = assertThrows(SseStream.RefusedException.class,
                    () -> subscriber.subscribe("?eventType=temperature"));
            assertTrue(refused.getMessage().contains("cannot be reached, and it has not yet said which publishers"
                    + " system 'subscriber' may receive events from"), refused.getMessage());
            try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, port)) {
                authorization.authorize("subscriber", "publisher");
                Await.until("the background retry finds the Authorization system", WAIT, () -> opens(subscriber));
            }
        }
    }

    /**
     * As the 4.x Event Handler: a subscriber the Authorization system answered for before a restart is served
     * after it, with the publishers it named, while the Authorization system is down; a new one waits for it.
     * When it answers again, a rule changed meanwhile takes effect in the open stream without an update.
     */
    @Test
    void itsLastAnswersOutliveARestartWhileItIsDown(@TempDir Path directory) throws Exception {
        String[] store = {"store.mode", "async", "store.url", "jdbc:h2:file:" + directory.resolve("log"),
                "store.user", "sa", "store.password", ""};
        int port;
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer server = start(authorization.uri().toString(), store);
             TestClient subscriber = server.client(pki.context("subscriber"))) {
            port = authorization.uri().getPort();
            authorization.authorize("subscriber", "publisher", "other");
            subscriber.subscribe("?eventType=temperature").close();
        }
        try (TestServer server = start("https://127.0.0.1:" + port + "/authorization", store);
             TestClient subscriber = server.client(pki.context("subscriber"));
             TestClient other = server.client(pki.context("other"));
             SseStream stream = subscriber.subscribe("?eventType=temperature")) {
            assertEquals(200, other.post("/eventhandler/publish", event("temperature", "other")).statusCode());
            assertEquals("\"from other\"", payload(stream.nextEvent(WAIT)), "served with the kept answer");
            assertThrows(SseStream.RefusedException.class, () -> other.subscribe("?eventType=temperature"),
                    "a subscriber it never answered for waits for it");

            try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, port)) {
                authorization.authorize("subscriber", "publisher");
                // The probe finds it, asks again for every kept answer, and the open stream follows.
                Await.until("the rule deleted while it was down takes effect", WAIT, () -> {
                    assertEquals(200, other.post("/eventhandler/publish", event("temperature", "other")).statusCode());
                    assertEquals(200, server.post("/eventhandler/publish", event("temperature", "publisher"))
                            .statusCode());
                    return "\"from publisher\"".equals(payloadUntilPublisher(stream));
                });
            }
        }
    }

    /** An authorization update that never reached this Event Handler is made up for by the periodic recheck. */
    @Test
    void aMissedRuleChangeTakesEffectAtTheNextRecheck() throws Exception {
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer server = start(authorization.uri().toString(), "security.authorization.recheck-seconds", "1");
             TestClient subscriber = server.client(pki.context("subscriber"));
             TestClient other = server.client(pki.context("other"))) {
            authorization.authorize("subscriber", "publisher", "other");
            try (SseStream stream = subscriber.subscribe("?eventType=temperature")) {
                assertEquals(200, other.post("/eventhandler/publish", event("temperature", "other")).statusCode());
                assertEquals("\"from other\"", payload(stream.nextEvent(WAIT)));
                authorization.authorize("subscriber", "publisher");
                Await.until("the recheck finds the deleted rule", WAIT, () -> {
                    assertEquals(200, other.post("/eventhandler/publish", event("temperature", "other")).statusCode());
                    assertEquals(200, server.post("/eventhandler/publish", event("temperature", "publisher"))
                            .statusCode());
                    return "\"from publisher\"".equals(payloadUntilPublisher(stream));
                });
                // From then on, only the publisher's events: the next one after another's is the publisher's.
                assertEquals(200, other.post("/eventhandler/publish", event("temperature", "other")).statusCode());
                assertEquals(200, server.post("/eventhandler/publish", event("temperature", "publisher")).statusCode());
                assertEquals("\"from publisher\"", payload(stream.nextEvent(WAIT)));
            }
        }
    }

    /** The first payload of the stream, read past every event of {@code other} up to the publisher's, of the two. */
    private static String payloadUntilPublisher(SseStream stream) {
        try {
            String first = payload(stream.nextEvent(WAIT));
            if (!first.equals("\"from publisher\"")) {
                payload(stream.nextEvent(WAIT)); // the publisher's event of the same round
            }
            return first;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String payload(SseStream.Frame event) {
        return event.data().replaceAll(".*\"payload\":(\"[^\"]*\").*", "$1");
    }

    private static boolean opens(TestClient client) {
        try {
            client.subscribe("?eventType=temperature").close();
            return true;
        } catch (SseStream.RefusedException e) {
            return false;
        }
    }

    @Test
    void anAuthorizationChangeIsAskedAgain() {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             PublisherAuthorization rules = PublisherAuthorization.connect(Authorizer.INSECURE,
                     ConfigLoader.withOverrides(Map.of("security.authorization.enabled", "true",
                             "security.authorization.uri", authorization.uri().toString())).security(),
                     null, AuthorizationStore.NONE)) {
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

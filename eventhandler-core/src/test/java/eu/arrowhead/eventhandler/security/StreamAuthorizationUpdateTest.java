package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 27: an authorization update reaches the SSE streams that are open, over real mutual TLS with the
 * {@link AuthorizationStandIn} as the Authorization system. Once {@code publish/authupdate} is answered, no
 * event of a publisher whose rule was deleted reaches a stream, the still authorized publishers' events go on
 * arriving in order, a newly authorized publisher's events arrive, and a stream left with no publisher ends.
 */
class StreamAuthorizationUpdateTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int EVENTS = 50;
    private static final String UPDATE = "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"payload\":\"7\","
            + "\"source\":{\"systemName\":\"authorization\"}}";

    private static AuthorizationStandIn rules;
    private static TestServer server;
    private static TestClient publisher;
    private static TestClient other;
    private static TestClient subscriber;
    private static TestClient authorization;

    @BeforeAll
    static void start() {
        TestPki pki = TestPki.get();
        rules = new AuthorizationStandIn(pki, 0);
        server = TestServer.start(pki.context("publisher"), pki.serverSettings(
                "security.authorization.enabled", "true", "security.authorization.uri", rules.uri().toString(),
                "security.authorization.start-retries", "0"));
        publisher = server.client(pki.context("publisher"));
        other = server.client(pki.context("other"));
        subscriber = server.client(pki.context("subscriber"));
        authorization = server.client(pki.context("authorization"));
    }

    @AfterAll
    static void stop() {
        TestServer.closeAll(publisher, other, subscriber, authorization, server, rules);
    }

    private static void publish(TestClient client, String system, String type, String payload) {
        Reply reply = client.post("/eventhandler/publish", "{\"eventType\":\"" + type + "\",\"payload\":\""
                + payload + "\",\"source\":{\"systemName\":\"" + system + "\"}}");
        assertEquals(200, reply.statusCode(), reply.body());
    }

    /** Sends the update as the Authorization system does after a rule changed, and waits for its answer. */
    private static void authorizationUpdate() {
        Reply reply = authorization.post("/eventhandler/publish/authupdate", UPDATE);
        assertEquals(200, reply.statusCode(), reply.body());
    }

    /** "source: payload" of the stream's events up to and including the one with {@code lastPayload}. */
    private static List<String> receiveUntil(SseStream stream, String lastPayload) throws Exception {
        List<String> received = new ArrayList<>();
        while (true) {
            JsonNode event = JSON.readTree(stream.nextEvent(WAIT).data());
            String payload = event.path("payload").asText();
            received.add(event.path("source").path("systemName").asText() + ": " + payload);
            if (payload.equals(lastPayload)) {
                return received;
            }
        }
    }

    @Test
    void aRevokedPublishersEventsStopReachingAnOpenStreamOnceTheUpdateIsAnswered() throws Exception {
        rules.authorize("subscriber", "publisher", "other");
        try (SseStream stream = subscriber.subscribe("?eventType=alarms")) {
            publish(other, "other", "alarms", "first");
            publish(publisher, "publisher", "alarms", "second");
            assertEquals(List.of("other: first", "publisher: second"), receiveUntil(stream, "second"),
                    "both publishers are authorized at first");

            rules.authorize("subscriber", "publisher");
            authorizationUpdate();

            List<String> expected = new ArrayList<>();
            for (int i = 0; i < EVENTS; i++) {
                publish(other, "other", "alarms", "revoked " + i);
                publish(publisher, "publisher", "alarms", "allowed " + i);
                expected.add("publisher: allowed " + i);
            }
            publish(publisher, "publisher", "alarms", "end");
            expected.add("publisher: end");
            // One stream, in publish order: had any of the revoked publisher's events been written, it would be here.
            assertEquals(expected, receiveUntil(stream, "end"));
        }
    }

    @Test
    void aNewlyAuthorizedPublishersEventsReachAnOpenStreamAfterTheUpdate() throws Exception {
        rules.authorize("subscriber", "publisher");
        try (SseStream stream = subscriber.subscribe("?eventType=sirens")) {
            publish(other, "other", "sirens", "not yet");
            publish(publisher, "publisher", "sirens", "first");
            assertEquals(List.of("publisher: first"), receiveUntil(stream, "first"), "other is not authorized yet");

            rules.authorize("subscriber", "publisher", "other");
            authorizationUpdate();
            publish(other, "other", "sirens", "now");
            publish(publisher, "publisher", "sirens", "end");
            assertEquals(List.of("other: now", "publisher: end"), receiveUntil(stream, "end"));
        }
    }

    @Test
    void aStreamLeftWithNoPublisherEndsAndItsReconnectionIsRefusedWithTheReason() throws Exception {
        rules.authorize("subscriber", "publisher");
        try (SseStream stream = subscriber.subscribe("?eventType=floods&source=publisher")) {
            publish(publisher, "publisher", "floods", "first");
            assertEquals(List.of("publisher: first"), receiveUntil(stream, "first"));

            rules.authorize("subscriber", "other");
            authorizationUpdate();
            stream.awaitEnd(WAIT);
            assertTrue(stream.endedCleanly(), "ended, not cut off");
        }
        Reply reconnected = subscriber.get("/eventhandler/events?eventType=floods&source=publisher");
        assertEquals(403, reconnected.statusCode(), reconnected.body());
        assertTrue(reconnected.body().contains("none of the sources [publisher]"), reconnected.body());
    }
}

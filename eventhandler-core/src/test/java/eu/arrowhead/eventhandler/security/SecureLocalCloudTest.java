package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.push.StandInSubscriber;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A secure Arrowhead local cloud made in the test, without the internet, as issue 27's interop suite has it: a CA
 * and the certificates of the Event Handler, a publisher, a subscriber and the Authorization system
 * ({@link TestPki}); the Authorization system's stand-in answers {@code subscription/check} and announces a rule
 * change with {@code publish/authupdate} as 4.x does; the subscriber's push receiver requires a client
 * certificate. The other suites of the secure cloud: {@code SecurePushTest} (each endpoint's rule, connections
 * per subscriber), {@code AuthorizationSystemTest} (outages and restarts), {@code StreamAuthorizationUpdateTest}
 * (revocation in open streams), {@code OpenRelayTest} (notify targets), {@code SecureModeTest}.
 */
class SecureLocalCloudTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int EVENTS = 200;

    private final TestPki pki = TestPki.get();

    @Test
    void aRuleDeletedInTheAuthorizationSystemStopsPushAndStreamAlike() throws Exception {
        try (AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer server = TestServer.start(pki.context("publisher"), pki.serverSettings(
                     "security.authorization.enabled", "true", "security.authorization.uri",
                     authorization.uri().toString(), "security.authorization.start-retries", "0"));
             TestClient publisher = server.client(pki.context("publisher"));
             TestClient subscriber = server.client(pki.context("subscriber"));
             TestClient other = server.client(pki.context("other"));
             TestClient authorizationSystem = server.client(pki.context("authorization"));
             StandInSubscriber receiver = StandInSubscriber.healthyOverTls(pki)) {
            authorization.authorize("subscriber", "publisher", "other");
            Reply subscribed = subscriber.post("/eventhandler/subscribe", receiver.subscription("subscriber", "alarms", ""));
            assertEquals(200, subscribed.statusCode(), subscribed.body());
            try (SseStream stream = subscriber.subscribe("?eventType=alarms")) {
                List<String> sent = new ArrayList<>();
                for (int i = 0; i < EVENTS; i++) {
                    publish(publisher, "publisher", "p" + i);
                    sent.add("p" + i);
                }
                receiver.awaitEvents(EVENTS);
                assertEquals(sent, receiver.payloads(), "every event once, in order, pushed over mutual TLS");
                // Kept alive and reused (a spare opened when one POST starts before the last one's connection is
                // back may be replaced): a handful, not one per event.
                assertTrue(receiver.connections() <= EVENTS / 20, EVENTS + " POSTs on " + receiver.connections()
                        + " connections");
                assertEquals(sent, payloads(stream, EVENTS));

                Reply update = authorization.changeRules(authorizationSystem, "subscriber", "other");
                assertEquals(200, update.statusCode(), update.body());
                publish(publisher, "publisher", "revoked");
                publish(other, "other", "still allowed");
                assertEquals(List.of("still allowed"), payloads(stream, 1));
                receiver.awaitEvents(EVENTS + 1);
                assertEquals("still allowed", receiver.payloads().get(EVENTS), "nothing of the revoked publisher");
            }
        }
    }

    private static void publish(TestClient client, String source, String payload) {
        Reply reply = client.post("/eventhandler/publish", "{\"eventType\":\"alarms\",\"payload\":\"" + payload
                + "\",\"source\":{\"systemName\":\"" + source + "\"}}");
        assertEquals(200, reply.statusCode(), reply.body());
    }

    private static List<String> payloads(SseStream stream, int count) throws InterruptedException {
        List<String> payloads = new ArrayList<>();
        for (SseStream.Frame event : stream.events(count, WAIT)) {
            payloads.add(event.data().replaceAll(".*\"payload\":\"([^\"]*)\".*", "$1"));
        }
        return payloads;
    }
}

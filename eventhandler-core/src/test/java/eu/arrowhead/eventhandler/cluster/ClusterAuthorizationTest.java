package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode: the Authorization system sends its update to one node, and the streams open on the other nodes
 * follow it too (without a recheck, which is off here).
 */
class ClusterAuthorizationTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path directory;

    private static TestServer node(NatsCluster nats, String name, AuthorizationStandIn authorization) {
        return TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.urls(), "cluster.node-name", name,
                "security.authorization.enabled", "true", "security.authorization.uri", authorization.uri().toString(),
                "security.authorization.start-retries", "0", "security.authorization.recheck-seconds", "0");
    }

    private static void publish(TestServer node, String source, String payload) {
        Reply reply = node.post("/eventhandler/publish", "{\"eventType\":\"temperature\",\"payload\":\"" + payload
                + "\",\"source\":{\"systemName\":\"" + source + "\"}}");
        assertEquals(200, reply.statusCode(), reply.body());
    }

    @Test
    void anUpdateSentToOneNodeReachesTheStreamsOfEveryNode() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 1);
             AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer told = node(nats, "told", authorization);
             TestServer other = node(nats, "other", authorization)) {
            authorization.authorize("dashboard", "sensor-1", "sensor-2");
            try (SseStream stream = other.subscribe("?eventType=temperature&subscriber=dashboard")) {
                publish(told, "sensor-1", "allowed");
                assertEquals("allowed", payload(stream.nextEvent(WAIT)));

                authorization.authorize("dashboard", "sensor-2");
                Reply update = told.post("/eventhandler/publish/authupdate",
                        "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"payload\":\"7\"}");
                assertEquals(200, update.statusCode(), update.body());
                // Told over NATS and asked again on its own time: each round is one revoked and one allowed event.
                Await.until("the other node follows the update", WAIT, () -> revokedIsLeftOut(told, stream));
            }
        }
    }

    /** Publishes a revoked and an allowed event: whether the stream receives only the allowed one. */
    private static boolean revokedIsLeftOut(TestServer node, SseStream stream) {
        publish(node, "sensor-1", "revoked");
        publish(node, "sensor-2", "still allowed");
        try {
            if (payload(stream.nextEvent(WAIT)).equals("revoked")) {
                assertEquals("still allowed", payload(stream.nextEvent(WAIT)));
                return false;
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String payload(SseStream.Frame frame) {
        return frame.data().replaceAll(".*\"payload\":\"([^\"]*)\".*", "$1");
    }
}

package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.RefusedStream;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node cut off from NATS: it refuses publishes (503) and new streams at once, says so in mgmt/health, ends its
 * open streams after cluster.outage-grace-millis so that their clients move to another node, and serves again,
 * from where its stream left off, once NATS is back.
 */
class ClusterOutageTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path directory;

    private static String event(String payload) {
        return "{\"eventType\":\"outage\",\"payload\":\"" + payload + "\"}";
    }

    private static JsonNode health(TestServer node) throws Exception {
        return JSON.readTree(node.get("/eventhandler/mgmt/health").body());
    }

    @Test
    void aNodeCutOffFromNatsRefusesThenEndsItsStreamsAndServesAgainWhenNatsIsBack() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 1);
             TestServer node = TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                     "cluster.outage-grace-millis", "500", "cluster.node-name", "lonely", "sse.retry-millis", "1000")) {
            Reply before = node.post("/eventhandler/publish", event("before"));
            assertEquals(200, before.statusCode(), before.body());
            long beforeId = JSON.readTree(before.body()).get("id").asLong();

            try (SseStream stream = node.subscribe("?eventType=outage", "Last-Event-ID", Long.toString(beforeId - 1))) {
                assertEquals(Long.toString(beforeId), stream.nextEvent(WAIT).id());
                nats.kill(0);
                Await.until("the node to see itself cut off", WAIT,
                        () -> node.get("/eventhandler/mgmt/health").statusCode() == 503);
                JsonNode cluster = health(node).get("cluster");
                assertEquals("CUT_OFF", cluster.get("status").asText(), cluster.toString());
                assertTrue(cluster.has("cutOffSince"), cluster.toString());

                Reply refused = node.post("/eventhandler/publish", event("during"));
                assertEquals(503, refused.statusCode(), refused.body());
                assertTrue(refused.body().contains("this node lost its NATS server nats://127.0.0.1")
                        && refused.body().contains("another node"), refused.body());
                ErrorMessage streamRefused = RefusedStream.request(node.port(), "?eventType=outage", 1000);
                assertTrue(streamRefused.errorMessage().contains("NATS"), streamRefused.errorMessage());

                stream.awaitEnd(WAIT);
            }

            nats.startServer(0);
            Await.until("the node to have NATS again", WAIT,
                    () -> node.get("/eventhandler/mgmt/health").statusCode() == 200);
            Reply after = node.post("/eventhandler/publish", event("after"));
            assertEquals(200, after.statusCode(), after.body());
            long afterId = JSON.readTree(after.body()).get("id").asLong();
            assertTrue(afterId > beforeId, "the sequence goes on: " + beforeId + " then " + afterId);
            try (SseStream resumed = node.subscribe("?eventType=outage", "Last-Event-ID", Long.toString(beforeId))) {
                assertEquals(Long.toString(afterId), resumed.nextEvent(WAIT).id());
            }
        }
    }
}

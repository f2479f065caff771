package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, item 4: 10 000 invented event types from one anonymous client filled {@code topic.max-count}, and
 * every new legitimate type, and every subscription to one, was refused for {@code topic.idle-seconds} (an hour).
 * Now the junk gives way: both are served at once after the flood.
 */
class JunkTopicFloodTest {
    private static final int MAX_TOPICS = 2_000;
    private static final long ONE_SECOND_NANOS = Duration.ofSeconds(1).toNanos();

    @Test
    void aLegitimateTypeAndASubscriptionAreServedAtOnceAfterAFloodOfInventedTypes() throws Exception {
        try (TestServer server = TestServer.start("topic.max-count", Integer.toString(MAX_TOPICS));
             SseStream kept = server.subscribe("?eventType=subscribed-before")) {
            for (int batch = 0; batch < 10; batch++) {
                StringBuilder junk = new StringBuilder("[");
                for (int i = 0; i < 1_000; i++) {
                    junk.append(i == 0 ? "" : ",").append("{\"eventType\":\"junk-").append(batch).append('-').append(i)
                            .append("\",\"payload\":\"j\"}");
                }
                Reply reply = server.post("/eventhandler/publish/batch", junk.append(']').toString());
                assertEquals(200, reply.statusCode(), reply.body());
            }
            assertEquals(MAX_TOPICS, server.metric("eventhandler_topics"));

            long sent = System.nanoTime();
            Reply legitimate = server.post("/eventhandler/publish", "{\"eventType\":\"temperature\",\"payload\":\"21.5\"}");
            assertEquals(200, legitimate.statusCode(), legitimate.body());
            assertTrue(System.nanoTime() - sent < ONE_SECOND_NANOS, "accepted within a second");

            sent = System.nanoTime();
            try (SseStream fresh = server.subscribe("?eventType=pressure")) {
                assertTrue(System.nanoTime() - sent < ONE_SECOND_NANOS, "served within a second");
                long id = server.publish("pressure", "1013");
                assertEquals(Long.toString(id), fresh.nextEvent(Duration.ofSeconds(10)).id());
            }
            long keptId = server.publish("subscribed-before", "still delivered");
            assertEquals(Long.toString(keptId), kept.nextEvent(Duration.ofSeconds(10)).id(),
                    "a subscribed topic never gave way");
            assertTrue(server.metric("eventhandler_topics_evicted_total") >= 10_000 - MAX_TOPICS);
        }
    }
}

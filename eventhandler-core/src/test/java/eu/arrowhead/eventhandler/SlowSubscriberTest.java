package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A subscriber that never reads must cost the others nothing, and must not cost memory without bound. */
class SlowSubscriberTest {
    private static final int EVENTS = 20_000;
    private static final int QUEUE_CAPACITY = 1024;
    private static final String KILOBYTE = "x".repeat(1024);

    @Test
    void aStalledSubscriberIsCutOffWhileAHealthyOneKeepsLowLatency() throws Exception {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        long heapBefore = memory.getHeapMemoryUsage().getUsed();
        try (TestServer server = TestServer.start("subscriber.queue-capacity", Integer.toString(QUEUE_CAPACITY));
             RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=firehose", 4096);
             SseStream healthy = server.subscribe("?eventType=firehose")) {
            stalled.awaitText(":ok", 5_000);

            long[] sent = new long[EVENTS];
            for (int i = 0; i < EVENTS; i++) {
                sent[i] = System.nanoTime();
                server.publish("firehose", KILOBYTE);
            }
            List<Frame> received = healthy.events(EVENTS, Duration.ofSeconds(60));
            long[] latencies = new long[EVENTS];
            for (int i = 0; i < EVENTS; i++) {
                latencies[i] = received.get(i).receivedNanos() - sent[i];
            }
            Arrays.sort(latencies);
            double p99Millis = latencies[(int) (EVENTS * 0.99)] / 1e6;
            assertTrue(p99Millis < 50, "healthy subscriber's p99 latency was " + p99Millis + " ms");

            assertTrue(stalled.drainUntilClosed(30_000), "the stalled subscriber was never disconnected");
            Await.until("the stalled subscriber is gone", Duration.ofSeconds(10),
                    () -> server.topic("firehose").orElseThrow().subscribers() == 1);
            long dropped = server.topic("firehose").orElseThrow().dropped();
            assertTrue(dropped >= 1 && dropped <= QUEUE_CAPACITY + 1,
                    "the stalled subscriber held at most its queue: dropped " + dropped);
            assertEquals(1.0, server.metric("eventhandler_subscriber_disconnects_total{reason=\"slow\"}"));
        }
        System.gc();
        long heapGrowth = memory.getHeapMemoryUsage().getUsed() - heapBefore;
        assertTrue(heapGrowth < 64L << 20, "heap grew by " + (heapGrowth >> 20) + " MiB");
    }
}

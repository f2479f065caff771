package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * What per-subscriber queues buy over the seeds' design, in which the publishing thread wrote to every
 * subscriber in turn ({@code subscriber.write-mode=publisher-thread}, kept as an ablation for benchmarks).
 */
class WriteModeTest {
    private static final int WRITE_TIMEOUT_SECONDS = 2;
    /** 5 MB: far more than a stalled socket's buffers and Grizzly's write queue take. */
    private static final int EVENTS = 5_000;
    private static final String KILOBYTE = "x".repeat(1024);

    @Test
    void withPublisherThreadWritesAStalledSubscriberDelaysAPublishByTheWriteTimeout() throws Exception {
        try (TestServer server = serverWithWriteMode("publisher-thread")) {
            double slowestSeconds = slowestPublishWithAStalledSubscriber(server);
            assertTrue(slowestSeconds >= WRITE_TIMEOUT_SECONDS * 0.95,
                    "the slowest publish took " + slowestSeconds + " s");
            assertTrue(slowestSeconds < WRITE_TIMEOUT_SECONDS * 3, "the slowest publish took " + slowestSeconds + " s");
            assertEquals(1.0, server.metric("eventhandler_subscriber_disconnects_total{reason=\"write_timeout\"}"));
        }
    }

    @Test
    void withQueuedWritesAStalledSubscriberDelaysNoPublish() throws Exception {
        try (TestServer server = serverWithWriteMode("queued")) {
            double slowestSeconds = slowestPublishWithAStalledSubscriber(server);
            assertTrue(slowestSeconds < WRITE_TIMEOUT_SECONDS / 2.0, "the slowest publish took " + slowestSeconds + " s");
            assertEquals(1.0, server.metric("eventhandler_subscriber_disconnects_total{reason=\"slow\"}"));
        }
    }

    /** The queue holds 1 MiB, well below the 5 MB published, so a stalled subscriber overflows it. */
    private static TestServer serverWithWriteMode(String mode) {
        return TestServer.start("subscriber.write-mode", mode,
                "subscriber.write-timeout-seconds", Integer.toString(WRITE_TIMEOUT_SECONDS),
                "subscriber.send-buffer-bytes", "16384", "subscriber.queue-max-bytes", "1048576");
    }

    /** Publishes {@link #EVENTS} events one after another; a healthy subscriber must receive them all. */
    private static double slowestPublishWithAStalledSubscriber(TestServer server) throws Exception {
        try (RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=stall", 4096);
             SseStream healthy = server.subscribe("?eventType=stall")) {
            stalled.awaitText(":ok", 5_000);
            long slowest = 0;
            for (int i = 0; i < EVENTS; i++) {
                long start = System.nanoTime();
                server.publish("stall", KILOBYTE);
                slowest = Math.max(slowest, System.nanoTime() - start);
            }
            assertEquals(EVENTS, healthy.events(EVENTS, Duration.ofSeconds(60)).size());
            return slowest / 1e9;
        }
    }
}

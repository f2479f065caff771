package eu.arrowhead.eventhandler.testing;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Holds a server's only worker: publishes of {@code eventType} in a loop until one blocks on a subscriber of
 * that type whose socket takes nothing. The server must run with {@code server.worker-threads=1},
 * {@code server.worker-queue=0}, {@code subscriber.write-mode=publisher-thread} (a publish then writes to its
 * subscribers itself, waiting up to {@code subscriber.write-timeout-seconds}) and such a subscriber (a
 * {@link RawSubscriber} that never reads). The worker is known to be held when a request that needs one gets
 * 503. Closing the subscriber frees it.
 */
public final class BusyWorker implements AutoCloseable {
    private static final String LARGE = "z".repeat(60_000);
    private static final long BLOCKED_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final TestServer server;
    private final Thread publisher;
    private volatile boolean stopped;
    /** When the publish in flight was sent; 0 between publishes. */
    private volatile long inFlightSinceNanos;
    private final Reply refusal;

    private BusyWorker(TestServer server, String eventType) throws InterruptedException {
        this.server = server;
        String event = "{\"eventType\":\"" + eventType + "\",\"payload\":\"" + LARGE + "\"}";
        this.publisher = new Thread(() -> {
            while (!stopped) {
                try {
                    inFlightSinceNanos = System.nanoTime();
                    server.post("/eventhandler/publish", event);
                    inFlightSinceNanos = 0;
                } catch (UncheckedIOException e) {
                    return; // the server closed
                }
            }
        }, "busy-worker-publisher");
        publisher.setDaemon(true);
        publisher.start();
        Reply[] probe = new Reply[1];
        // A 503 alone could come from a publish that merely runs at that moment and ends a millisecond later;
        // one that has been in flight for a second is blocked on the stalled subscriber.
        Await.until("a publish holds the only worker", Duration.ofSeconds(30), () -> {
            long since = inFlightSinceNanos;
            if (since == 0 || System.nanoTime() - since < BLOCKED_NANOS) {
                return false;
            }
            probe[0] = server.get("/eventhandler/echo");
            return probe[0].statusCode() == 503;
        });
        this.refusal = probe[0];
    }

    /** Starts publishing; returns once the only worker is held. */
    public static BusyWorker occupy(TestServer server, String eventType) throws InterruptedException {
        return new BusyWorker(server, eventType);
    }

    /** The 503 that showed the worker was held. */
    public Reply refusal() {
        return refusal;
    }

    /** Whether a request that needs a worker is still refused. */
    public boolean stillBusy() {
        return server.get("/eventhandler/echo").statusCode() == 503;
    }

    /** Stops publishing once the publish in progress ends (close the stalled subscriber to end it). */
    @Override
    public void close() {
        stopped = true;
    }
}

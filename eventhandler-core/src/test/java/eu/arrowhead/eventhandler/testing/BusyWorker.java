package eu.arrowhead.eventhandler.testing;

import java.io.UncheckedIOException;
import java.time.Duration;

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

    private final TestServer server;
    private final Thread publisher;
    private volatile boolean stopped;
    private final Reply refusal;

    private BusyWorker(TestServer server, String eventType) throws InterruptedException {
        this.server = server;
        String event = "{\"eventType\":\"" + eventType + "\",\"payload\":\"" + LARGE + "\"}";
        this.publisher = new Thread(() -> {
            while (!stopped) {
                try {
                    server.post("/eventhandler/publish", event);
                } catch (UncheckedIOException e) {
                    return; // the server closed
                }
            }
        }, "busy-worker-publisher");
        publisher.setDaemon(true);
        publisher.start();
        Reply[] probe = new Reply[1];
        Await.until("a publish holds the only worker", Duration.ofSeconds(30), () -> {
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

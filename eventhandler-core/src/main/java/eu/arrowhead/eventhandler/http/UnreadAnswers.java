package eu.arrowhead.eventhandler.http;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.WriteHandler;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;
import org.glassfish.grizzly.nio.NIOConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds a connection's next request while the answers the client has not read yet exceed a bound, so that a
 * client that pipelines requests without reading their answers makes the server stop reading it, instead of
 * queuing answers without end: before this, a client that pipelined publishes and read nothing had 56 MB of
 * answers queued within 15 s at {@code -Xmx64m}. A publish runs on the selector thread, which writes its answer into
 * the connection's write queue once the socket's buffer is full; nothing there waits for the queue to drain.
 *
 * <p>The request that finds the queue past the bound is served, and its response is suspended: Grizzly parses
 * no further request of the connection (the rest of what was read stays where it is, at most one read
 * buffer) until the client has read the queued answers; then the response ends and the next request is
 * parsed. Nothing is refused or lost: the client is slowed to the pace at which it reads. A client that reads
 * nothing for {@code server.write-timeout-seconds} is disconnected, as a blocked write would be; its requests
 * not yet parsed are neither answered nor published.
 *
 * <p>It counts the requests it holds: the metric {@code eventhandler_connections_held_for_unread_answers}, the
 * connections whose clients do not read their answers.
 */
final class UnreadAnswers {
    private static final Logger LOG = LoggerFactory.getLogger(UnreadAnswers.class);
    /** Bytes of answers queued for one connection past which its next request waits. */
    static final int MAX_QUEUED_BYTES = 64 * 1024;

    private final AtomicInteger held = new AtomicInteger();

    /** The requests held now, each on a connection of its own: a connection parses nothing while one is held. */
    int held() {
        return held.get();
    }

    /**
     * Suspends {@code response} (unless {@code arrival} has) if the connection's unread answers are past the
     * bound, and ends it once they have drained.
     *
     * @param arrival  the response's suspension if it is suspended already (its body arrived in parts: Grizzly
     *                 does not read on until asked), else null
     * @param resumed  run after the held response has ended
     * @return whether the response was held: then it is not the caller's to end
     */
    boolean holdWhileUnread(Request request, Response response, Suspension arrival, Runnable resumed) {
        Connection<?> connection = request.getContext().getConnection();
        if (!(connection instanceof NIOConnection nio) || nio.getAsyncWriteQueue().spaceInBytes() <= MAX_QUEUED_BYTES) {
            return false;
        }
        Suspension held = arrival;
        if (held == null) {
            held = new Suspension(() -> { });
            held.suspend(response, connection.getTransport().getWriteTimeout(TimeUnit.MILLISECONDS),
                    timedOut -> closeStuck(connection));
            // As for a request on a worker: a suspended response alone does not stop Grizzly from reading on, and
            // what it read would meet the requests it still holds (a ClassCastException in its filter chain).
            SuspendedChains.suspend(request);
        } else {
            // Suspended with the body's timeout, which has done its work: it starts again, and closes the
            // connection if the client has read nothing for the write timeout.
            held.holdAtMost(response, connection.getTransport().getWriteTimeout(TimeUnit.MILLISECONDS),
                    () -> closeStuck(connection));
            SuspendedChains.suspended(request);
        }
        // Grizzly tells a write handler when the queue is below the connection's own limit, which is some
        // megabytes by default; it is lowered while the request is held.
        int limit = nio.getMaxAsyncWriteQueueSize();
        nio.setMaxAsyncWriteQueueSize(MAX_QUEUED_BYTES);
        Suspension suspension = held;
        this.held.incrementAndGet();
        nio.notifyCanWrite(new WriteHandler() {
            @Override
            public void onWritePossible() {
                UnreadAnswers.this.held.decrementAndGet();
                nio.setMaxAsyncWriteQueueSize(limit);
                try {
                    suspension.resume(response);
                } finally {
                    SuspendedChains.ended(connection);
                }
                resumed.run();
            }

            @Override
            public void onError(Throwable t) {
                // the connection closed; Grizzly cancels the suspended response
                UnreadAnswers.this.held.decrementAndGet();
                nio.setMaxAsyncWriteQueueSize(limit);
                SuspendedChains.ended(connection);
            }
        });
        return true;
    }

    private static boolean closeStuck(Connection<?> connection) {
        LOG.debug("closed {}: it read none of its queued answers for the write timeout", connection.getPeerAddress());
        connection.closeSilently();
        return false;
    }
}

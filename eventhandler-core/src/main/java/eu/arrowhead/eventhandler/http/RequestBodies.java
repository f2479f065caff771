package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.glassfish.grizzly.IOEvent;
import org.glassfish.grizzly.ReadHandler;
import org.glassfish.grizzly.http.io.InputBuffer;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;
import org.glassfish.grizzly.http.server.TimeoutHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for request bodies without holding a thread, so that a client that sends its body slowly holds a
 * connection and the bytes it sent, never a worker.
 *
 * <p>A body still arriving when the request's headers are parsed is gathered by Grizzly's non-blocking input
 * on the selector thread, with the response suspended; the request goes on to its handler only once the body
 * is whole, and then reads it without blocking. Limits, each answered with an ErrorMessage and the connection
 * closed:
 * <ul>
 *   <li>a body over its endpoint's limit: 413, before reading when its {@code Content-Length} says so, and as
 *       soon as a chunked body passes the limit;</li>
 *   <li>a body not whole within {@code server.body-timeout-seconds} of its headers: 408;</li>
 *   <li>the bytes of bodies held at once, arriving or waiting for a worker, stay within a budget that the heap
 *       can hold: past it 503 with {@code Retry-After}. What counts is what has arrived, not what a
 *       {@code Content-Length} promises, so clients that announce large bodies and send nothing take nothing
 *       from the others.</li>
 * </ul>
 */
public final class RequestBodies {
    private static final Logger LOG = LoggerFactory.getLogger(RequestBodies.class);
    /** A body arriving is counted in steps of this many bytes: one callback per step, not per packet. */
    private static final int COUNTING_STEP_BYTES = 64 * 1024;
    private static final int WAITING = 0;
    private static final int COMPLETE = 1;
    private static final int ENDED = 2;

    /** The largest body of one kind of request, and the configuration key that sets it, for the 413's message. */
    public record Limit(int bytes, String key) {
    }

    private final Duration timeout;
    private final long budgetBytes;
    private final Limit publishLimit;
    private final Limit otherLimit;
    private final AtomicLong heldBytes = new AtomicLong();

    /**
     * @param timeout      the longest a body may take to arrive ({@code server.body-timeout-seconds})
     * @param budgetBytes  the most bytes of bodies held at once; at least either limit
     * @param publishLimit the limit of publish and publish/batch bodies
     * @param otherLimit   the limit of every other request's body
     */
    public RequestBodies(Duration timeout, long budgetBytes, Limit publishLimit, Limit otherLimit) {
        this.timeout = timeout;
        this.budgetBytes = budgetBytes;
        this.publishLimit = publishLimit;
        this.otherLimit = otherLimit;
    }

    /**
     * A request's body: the bytes of it counted against the budget until its handler is done, and the
     * suspension of its response if it arrived in parts.
     */
    public final class Body {
        private long size;
        private long counted;
        private boolean released;
        private volatile Suspension suspension;

        private Body(long size) {
            this.size = size;
        }

        /** Its length once whole. */
        public synchronized long bytes() {
            return size;
        }

        /**
         * Counts the whole body against the budget, for a request that waits for a worker and then runs on one.
         *
         * @return false if the budget cannot take it: refuse the request
         */
        public boolean hold() {
            return count(bytes());
        }

        /** Gives its bytes back to the budget; whoever calls, and however often. */
        public synchronized void release() {
            released = true;
            heldBytes.addAndGet(-counted);
            counted = 0;
        }

        /** Counts it at {@code bytes} received so far, if the budget takes them; nothing once released. */
        private synchronized boolean count(long bytes) {
            size = bytes;
            long more = bytes - counted;
            if (released || more > 0 && !reserve(more)) {
                return false;
            }
            counted = Math.max(counted, bytes);
            return true;
        }

        /** The response's suspension while the body arrived; null when it had arrived with the headers. */
        Suspension suspension() {
            return suspension;
        }
    }

    /**
     * Calls {@code ready} with the body once it has arrived whole: at once, on this thread, if it has; else
     * later on a selector thread, with the response suspended. A request refused for its body is answered here
     * and {@code ready} is never called.
     *
     * @param publish whether it is a publish, whose body has the publish limit
     */
    public void whenComplete(Request request, Response response, boolean publish, Consumer<Body> ready)
            throws IOException {
        Limit limit = publish ? publishLimit : otherLimit;
        if (request.getContentLengthLong() > limit.bytes()) {
            ErrorResponses.writeAndClose(request, response, tooLarge(limit), null);
            return;
        }
        InputBuffer input = request.getInputBuffer();
        if (input.isFinished()) {
            if (input.readyData() > limit.bytes()) {
                ErrorResponses.writeAndClose(request, response, tooLarge(limit), null);
            } else {
                ready.accept(new Body(input.readyData()));
            }
            return;
        }
        Arrival arrival = new Arrival(request, response, limit, new Body(0), ready);
        arrival.body.suspension = new Suspension(() -> arrival.onError(new IOException("the connection closed")));
        arrival.body.suspension.suspend(response, timeout.toMillis(), arrival);
        arrival.awaitMore();
    }

    /** The bytes of bodies held now, arriving or waiting for a worker. */
    public long heldBytes() {
        return heldBytes.get();
    }

    /** The most bytes of bodies held at once. */
    public long budgetBytes() {
        return budgetBytes;
    }

    private boolean reserve(long bytes) {
        long held;
        do {
            held = heldBytes.get();
            if (held + bytes > budgetBytes) {
                return false;
            }
        } while (!heldBytes.compareAndSet(held, held + bytes));
        return true;
    }

    private static RequestException tooLarge(Limit limit) {
        return RequestException.tooLarge("the request body is larger than " + limit.bytes() + " bytes ("
                + limit.key() + ")");
    }

    private RequestException overBudget() {
        return new RequestException(503, ExceptionType.UNAVAILABLE, "the Event Handler holds as many request bodies as its"
                + " heap allows (" + (budgetBytes >> 20) + " MiB); retry later");
    }

    /**
     * One body on its way in. Grizzly calls it from the selector thread as data arrives, from its timer thread
     * when the body is late, and when the connection closes; whichever ends it first decides, the others do
     * nothing.
     */
    private final class Arrival implements ReadHandler, TimeoutHandler {
        private final Request request;
        private final Response response;
        private final Limit limit;
        private final Body body;
        private final Consumer<Body> ready;
        private final AtomicInteger state = new AtomicInteger(WAITING);

        Arrival(Request request, Response response, Limit limit, Body body, Consumer<Body> ready) {
            this.request = request;
            this.response = response;
            this.limit = limit;
            this.body = body;
            this.ready = ready;
        }

        /** Asks to be told at the next counting step, at the limit, or at the end, whichever comes first. */
        void awaitMore() {
            long next = Math.min(limit.bytes() + 1L, request.getInputBuffer().readyData() + COUNTING_STEP_BYTES);
            request.getInputBuffer().notifyAvailable(this, (int) next);
        }

        @Override
        public void onDataAvailable() throws IOException {
            if (state.get() != WAITING) {
                return;
            }
            // On the last part Grizzly calls onAllDataRead next; asking again would leave a stale handler.
            if (counted() && request.getRequest().isExpectContent()) {
                awaitMore();
                // Grizzly stops reading the connection while it calls us and counts on the handler asking again
                // from a worker thread later; asked again here, on the selector thread, it would not read on.
                request.getContext().getConnection().enableIOEvent(IOEvent.READ);
            }
        }

        @Override
        public void onAllDataRead() {
            if (state.get() == WAITING && counted() && state.compareAndSet(WAITING, COMPLETE)) {
                ready.accept(body);
            }
        }

        /** Counts what has arrived, or refuses the request when it is over the limit or the budget. */
        private boolean counted() {
            int arrived = request.getInputBuffer().readyData();
            if (arrived > limit.bytes()) {
                refuse(tooLarge(limit), null);
                return false;
            }
            if (!body.count(arrived)) {
                refuse(overBudget(), 1);
                return false;
            }
            return true;
        }

        /** The client went away, or sent a body that breaks HTTP's framing (the codec has answered 400 then). */
        @Override
        public void onError(Throwable t) {
            if (state.compareAndSet(WAITING, ENDED)) {
                body.release();
                LOG.debug("a request body of {} did not arrive: {}", request.getRequestURI(), t.toString());
            }
        }

        @Override
        public boolean onTimeout(Response timedOut) {
            if (state.get() != WAITING) {
                // The body has come, and the response is still suspended: held for its client's unread answers.
                body.suspension.closeIfHeldTooLong();
                return false;
            }
            refuse(new RequestException(408, ExceptionType.INVALID_PARAMETER, "the request body did not arrive within "
                    + timeout.toSeconds() + " s (server.body-timeout-seconds)"), null);
            // Grizzly's own handling would cancel the response without an answer; ours has answered.
            return false;
        }

        private void refuse(RequestException e, Integer retryAfterSeconds) {
            if (!state.compareAndSet(WAITING, ENDED)) {
                return;
            }
            body.release();
            try {
                ErrorResponses.writeAndClose(request, response, e, retryAfterSeconds);
                body.suspension.resume(response);
            } catch (IOException | IllegalStateException gone) {
                // the connection closed meanwhile; nobody is waiting for the answer
                LOG.debug("could not answer {} to {}: {}", e.status(), request.getRequestURI(), gone.toString());
            }
        }
    }
}

package eu.arrowhead.eventhandler.http;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
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
 *   <li>bodies held at once, being gathered or waiting for their handler, stay within a byte budget that the
 *       heap can hold: past it 503 with {@code Retry-After}. A body is counted at its declared length, a
 *       chunked one still arriving at its endpoint's limit.</li>
 * </ul>
 */
public final class RequestBodies {
    private static final Logger LOG = LoggerFactory.getLogger(RequestBodies.class);
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
     * A whole body, which holds its share of the budget until its handler is done with it, and the suspension
     * of its response if it arrived in parts.
     */
    public final class Body {
        private final long bytes;
        private final AtomicBoolean released = new AtomicBoolean();
        private volatile Suspension suspension;

        private Body(long bytes) {
            this.bytes = bytes;
        }

        /** The bytes counted for it: its length, or the limit for a chunked body that arrived in parts. */
        public long bytes() {
            return bytes;
        }

        /** Gives its bytes back to the budget; once only, whoever calls. */
        public void release() {
            if (released.compareAndSet(false, true)) {
                heldBytes.addAndGet(-bytes);
            }
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
        long declared = request.getContentLengthLong();
        if (declared > limit.bytes()) {
            ErrorResponses.writeAndClose(request, response, tooLarge(limit), null);
            return;
        }
        InputBuffer input = request.getInputBuffer();
        boolean whole = input.isFinished();
        long counted = whole ? input.readyData() : declared >= 0 ? declared : limit.bytes();
        if (counted > limit.bytes()) {
            ErrorResponses.writeAndClose(request, response, tooLarge(limit), null);
            return;
        }
        Body body = reserve(counted);
        if (body == null) {
            ErrorResponses.writeAndClose(request, response, new RequestException(503, "UNAVAILABLE",
                    "the Event Handler holds as many request bodies as its heap allows (" + (budgetBytes >> 20)
                            + " MiB); retry later"), 1);
            return;
        }
        if (whole) {
            ready.accept(body);
            return;
        }
        Arrival arrival = new Arrival(request, response, limit, body, ready);
        body.suspension = new Suspension(() -> arrival.onError(new IOException("the connection closed")));
        body.suspension.suspend(response, timeout.toMillis(), arrival);
        // Told when more than the limit has arrived (only a chunked body can), or when all of it has.
        input.notifyAvailable(arrival, limit.bytes() + 1);
    }

    private Body reserve(long bytes) {
        long held;
        do {
            held = heldBytes.get();
            if (bytes > 0 && held + bytes > budgetBytes) {
                return null;
            }
        } while (!heldBytes.compareAndSet(held, held + bytes));
        return new Body(bytes);
    }

    private static RequestException tooLarge(Limit limit) {
        return RequestException.tooLarge("the request body is larger than " + limit.bytes() + " bytes ("
                + limit.key() + ")");
    }

    /**
     * One body on its way in. Grizzly calls it from the selector thread as data arrives, from its timer thread
     * when the body is late, and when the connection closes; whichever comes first decides, the others do
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

        /** More than the limit has arrived. */
        @Override
        public void onDataAvailable() {
            refuse(tooLarge(limit));
        }

        @Override
        public void onAllDataRead() {
            if (state.compareAndSet(WAITING, COMPLETE)) {
                ready.accept(body);
            }
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
            refuse(new RequestException(408, "INVALID_PARAMETER", "the request body did not arrive within "
                    + timeout.toSeconds() + " s (server.body-timeout-seconds)"));
            // Grizzly's own handling would cancel the response without an answer; ours has answered.
            return false;
        }

        private void refuse(RequestException e) {
            if (!state.compareAndSet(WAITING, ENDED)) {
                return;
            }
            body.release();
            try {
                ErrorResponses.writeAndClose(request, response, e, null);
                body.suspension.resume(response);
            } catch (IOException | IllegalStateException gone) {
                // the connection closed meanwhile; nobody is waiting for the answer
                LOG.debug("could not answer {} to {}: {}", e.status(), request.getRequestURI(), gone.toString());
            }
        }
    }
}

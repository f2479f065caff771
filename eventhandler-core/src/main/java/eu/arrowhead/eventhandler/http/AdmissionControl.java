package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.security.Caller;
import eu.arrowhead.eventhandler.security.ClientCertificates;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.glassfish.grizzly.http.server.HttpHandler;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.RequestExecutorProvider;
import org.glassfish.grizzly.http.server.Response;

/**
 * The front door: sends SSE subscriptions to their handler, publishes to theirs, and every other request
 * to Jersey on the bounded worker pool.
 *
 * <p>Grizzly's own dispatch has no answer for a full pool (the rejection becomes a 500). Here a request
 * takes a permit (worker threads + queue places) before it is queued; without one it is answered
 * {@code 503} with {@code Retry-After} on the selector thread, which costs microseconds and keeps memory
 * bounded under any load. A publish that runs on the selector thread takes a permit too, so that
 * shutdown waits for it like for any other admitted request.
 *
 * <p>In secure mode it attaches the caller's identity, read from its client certificate, to every request
 * as {@link Caller#ATTRIBUTE}.
 */
public final class AdmissionControl extends HttpHandler {
    private static final String ADMITTED = AdmissionControl.class.getName() + ".admitted";
    /**
     * Larger publishes (batches, mostly) run on a worker: parsing and validating up to
     * {@code publish.max-request-bytes} takes long enough that the selector's other connections would wait.
     */
    private static final int INLINE_MAX_BODY_BYTES = 16 * 1024;

    private final HttpHandler streams;
    private final String streamsPath;
    private final HttpHandler publishes;
    private final Predicate<String> isPublish;
    private final boolean publishesOnSelector;
    private final HttpHandler jersey;
    private final Executor workers;
    private final int capacity;
    private final Semaphore permits;
    private final RequestExecutorProvider dispatch = new RequestExecutorProvider() {
        @Override
        public Executor getExecutor(Request request) {
            if (isStream(request) || !permits.tryAcquire()) {
                return null;
            }
            request.setAttribute(ADMITTED, Boolean.TRUE);
            // A publish whose body has arrived whole reads without blocking and never waits in the hub,
            // so it runs on the selector that parsed it: a handoff to a worker costs a wake-up per
            // publish. On the 2-core machine, scripts/bench A (kept-alive row): p50 0.36 -> 0.25 ms,
            // 2 062 -> 3 749 publishes/s; ten publishers x ten subscribers: p50 3.1-3.5 -> 2.1-2.5 ms,
            // p99 15.6-15.9 -> 6.8-7.4 ms (docs/architecture.md has the whole series).
            boolean inline = publishesOnSelector && isPublish.test(request.getRequestURI())
                    && request.getContentLength() >= 0 && request.getContentLength() <= INLINE_MAX_BODY_BYTES
                    && request.getInputBuffer().isFinished();
            return inline ? null : workers;
        }
    };

    /**
     * @param publishes           the handler of publish requests ({@code isPublish} tells their paths)
     * @param publishesOnSelector whether a publish that never blocks may run on the selector thread: not
     *                            when it waits for the event store's commit or writes to subscribers with
     *                            blocking writes
     * @param permits             the number of requests that may be running or waiting for a worker at once
     */
    public AdmissionControl(HttpHandler streams, String streamsPath, HttpHandler publishes,
                            Predicate<String> isPublish, boolean publishesOnSelector, HttpHandler jersey,
                            Executor workers, int permits) {
        this.streams = streams;
        this.streamsPath = streamsPath;
        this.publishes = publishes;
        this.isPublish = isPublish;
        this.publishesOnSelector = publishesOnSelector;
        this.jersey = jersey;
        this.workers = workers;
        this.capacity = permits;
        this.permits = new Semaphore(permits);
    }

    /**
     * Waits until no admitted request is running or queued, for at most {@code timeoutNanos}.
     *
     * @return whether the server went idle in time
     */
    public boolean awaitIdle(long timeoutNanos) throws InterruptedException {
        if (!permits.tryAcquire(capacity, timeoutNanos, TimeUnit.NANOSECONDS)) {
            return false;
        }
        permits.release(capacity);
        return true;
    }

    @Override
    public RequestExecutorProvider getRequestExecutorProvider() {
        return dispatch;
    }

    @Override
    public void service(Request request, Response response) throws Exception {
        if (request.isSecure()) {
            request.setAttribute(Caller.ATTRIBUTE, ClientCertificates.caller(request));
        }
        if (isStream(request)) {
            streams.service(request, response);
        } else if (request.getAttribute(ADMITTED) != null) {
            try {
                (isPublish.test(request.getRequestURI()) ? publishes : jersey).service(request, response);
            } finally {
                permits.release();
            }
        } else {
            ErrorResponses.write(response, 503, "UNAVAILABLE",
                    "the Event Handler is overloaded: every worker is busy and the queue"
                            + " (server.worker-queue) is full; retry later", request.getRequestURI(), 1);
        }
    }

    private boolean isStream(Request request) {
        return streamsPath.equals(request.getRequestURI());
    }

    @Override
    public void start() {
        publishes.start();
        jersey.start();
        streams.start();
    }

    @Override
    public void destroy() {
        publishes.destroy();
        jersey.destroy();
        streams.destroy();
    }
}

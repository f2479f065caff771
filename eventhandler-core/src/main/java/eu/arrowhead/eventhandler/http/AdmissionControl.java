package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.ErrorBodies;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.push.PushLoopGuard;
import eu.arrowhead.eventhandler.security.Caller;
import eu.arrowhead.eventhandler.security.ClientCertificates;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.IOEvent;
import org.glassfish.grizzly.http.server.HttpHandler;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.RequestExecutorProvider;
import org.glassfish.grizzly.http.server.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The front door: every request passes here on the selector thread that parsed it. Here a request from a web
 * page of another origin is refused or given its CORS headers ({@link CorsPolicy}), one that breaks HTTP's
 * rules is refused ({@link RequestSyntax}), an SSE subscription goes to its handler at once, and every other
 * request waits for its body without a thread ({@link RequestBodies}), then goes to the publish handler or to
 * Jersey on the bounded worker pool.
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
    private static final Logger LOG = LoggerFactory.getLogger(AdmissionControl.class);
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
    private final CorsPolicy cors;
    private final RequestBodies bodies;
    private final PushLoopGuard pushLoops = new PushLoopGuard();
    private final UnreadAnswers unreadAnswers = new UnreadAnswers();
    private final RequestExecutorProvider sameThread = new RequestExecutorProvider.SameThreadProvider();

    /**
     * @param publishes           the handler of publish requests ({@code isPublish} tells their paths)
     * @param publishesOnSelector whether a publish that never blocks may run on the selector thread: not
     *                            when it waits for the event store's commit or writes to subscribers with
     *                            blocking writes
     * @param permits             the number of requests that may be running or waiting for a worker at once
     */
    public AdmissionControl(HttpHandler streams, String streamsPath, HttpHandler publishes,
                            Predicate<String> isPublish, boolean publishesOnSelector, HttpHandler jersey,
                            Executor workers, int permits, CorsPolicy cors, RequestBodies bodies) {
        this.streams = streams;
        this.streamsPath = streamsPath;
        this.publishes = publishes;
        this.isPublish = isPublish;
        this.publishesOnSelector = publishesOnSelector;
        this.jersey = jersey;
        this.workers = workers;
        this.capacity = permits;
        this.permits = new Semaphore(permits);
        this.cors = cors;
        this.bodies = bodies;
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

    /** Connections not read on now because their clients have not read their answers ({@link UnreadAnswers}). */
    public int connectionsHeldForUnreadAnswers() {
        return unreadAnswers.held();
    }

    /** Every request starts on the selector thread: whether it needs a worker is known only once its body is in. */
    @Override
    public RequestExecutorProvider getRequestExecutorProvider() {
        return sameThread;
    }

    @Override
    public void service(Request request, Response response) throws Exception {
        if (request.isSecure()) {
            request.setAttribute(Caller.ATTRIBUTE, ClientCertificates.caller(request));
        }
        try {
            pushLoops.check(request);
            if (!cors.admit(request, response)) {
                return;
            }
            RequestSyntax.check(request, response);
        } catch (RequestException e) {
            ErrorResponses.writeAndClose(request, response, e, null);
            return;
        }
        if (isStream(request)) {
            streams.service(request, response);
            return;
        }
        boolean publish = isPublish.test(request.getRequestURI());
        bodies.whenComplete(request, response, publish, body -> dispatch(request, response, publish, body));
    }

    /** Runs the request whose body has arrived, here or on a worker, if a permit is free. */
    private void dispatch(Request request, Response response, boolean publish, RequestBodies.Body body) {
        Suspension arrival = body.suspension();
        if (!permits.tryAcquire()) {
            body.release();
            refuse(request, response, arrival, "every worker is busy and the queue (server.worker-queue) is full");
            return;
        }
        if (publish && publishesOnSelector && body.bytes() <= INLINE_MAX_BODY_BYTES) {
            // A publish whose body has arrived reads without blocking and never waits in the hub, so it runs
            // on the selector that parsed it: a handoff to a worker costs a wake-up per publish. On the 2-core
            // machine, scripts/bench A (kept-alive row): p50 0.36 -> 0.25 ms, 2 062 -> 3 749 publishes/s; ten
            // publishers x ten subscribers: p50 3.1-3.5 -> 2.1-2.5 ms, p99 15.6-15.9 -> 6.8-7.4 ms
            // (docs/architecture.md has the whole series).
            try {
                serve(publishes, request, response, body, arrival);
                Connection<?> connection = request.getContext().getConnection();
                if (unreadAnswers.holdWhileUnread(request, response, arrival,
                        arrival == null ? () -> { } : () -> readOn(connection))) {
                    return;
                }
                if (arrival != null) {
                    arrival.resume(response);
                    // Grizzly stopped reading the connection while it told us the body was whole, and reads on
                    // only when asked: without this the client's next request on the connection is never read.
                    readOn(connection);
                }
            } finally {
                permits.release();
            }
            return;
        }
        if (!body.hold()) {
            permits.release();
            body.release();
            refuse(request, response, arrival, "the request bodies it holds take all the heap they may");
            return;
        }
        Suspension suspension = arrival != null ? arrival : Suspension.of(response);
        // As Grizzly does for a worker of its own: no more input is read from the connection until the response
        // is done, or the client's next request would be parsed while this one still finishes on the worker.
        Connection<?> connection = request.getContext().getConnection();
        SuspendedChains.suspend(request);
        try {
            workers.execute(() -> {
                try {
                    serve(publish ? publishes : jersey, request, response, body, suspension);
                    suspension.resume(response);
                } finally {
                    SuspendedChains.ended(connection);
                    permits.release();
                }
            });
        } catch (RejectedExecutionException e) {
            permits.release();
            body.release();
            refuse(request, response, suspension, "it is shutting down");
            SuspendedChains.ended(connection);
        }
    }

    private static void readOn(Connection<?> connection) {
        if (SuspendedChains.holdsRequests(connection)) {
            // Resuming the response had Grizzly parse the requests read behind it, and one of them is being served
            // away from the selector: Grizzly reads on once that one ends.
            return;
        }
        try {
            connection.enableIOEvent(IOEvent.READ);
        } catch (IOException e) {
            LOG.debug("cannot read on from {}: {}", connection.getPeerAddress(), e.toString());
            connection.closeSilently();
        }
    }

    /**
     * Runs a handler; a failure of its own is a 500 with an incident id, as Grizzly would only log it.
     *
     * @param suspension the response's, if it is suspended: once ended, the response is not ours to touch
     */
    private void serve(HttpHandler handler, Request request, Response response, RequestBodies.Body body,
                       Suspension suspension) {
        try {
            if (handler == jersey) {
                giveJerseyAHostItCanParse(request);
            }
            handler.service(request, response);
        } catch (Exception e) {
            if ((suspension == null || !suspension.ended()) && !response.isCommitted()) {
                response.reset();
                try {
                    ErrorBodies.writeFault(response, request.getRequestURI(), e);
                } catch (IOException gone) {
                    LOG.debug("could not answer a failed {}: {}", request.getRequestURI(), gone.toString());
                }
            }
        } finally {
            body.release();
        }
    }

    private static void refuse(Request request, Response response, Suspension suspension, String why) {
        try {
            ErrorBodies.write(response, 503, ExceptionType.UNAVAILABLE, "the Event Handler is overloaded: " + why
                    + "; retry later", request.getRequestURI(), 1);
        } catch (IOException gone) {
            LOG.debug("could not refuse {}: {}", request.getRequestURI(), gone.toString());
        }
        if (suspension != null) {
            suspension.resume(response);
        }
    }

    /**
     * Jersey makes a {@link URI} of the name in the {@code Host} header, and {@link URI} takes fewer host
     * names than HTTP does (none with an underscore, such as a container's name): Jersey would fail with a
     * 500. Our resources never use that name, so Jersey gets the local address instead.
     */
    private static void giveJerseyAHostItCanParse(Request request) {
        try {
            new URI("http", null, request.getServerName(), -1, "/", null, null);
        } catch (URISyntaxException e) {
            request.getRequest().serverName().setString(request.getLocalAddr());
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

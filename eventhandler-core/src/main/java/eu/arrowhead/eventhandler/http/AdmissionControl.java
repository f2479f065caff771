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
 * <p>A publish answered later ({@link PublishEndpoint.LaterAnswer}: a cluster's stream acknowledges its events on
 * a thread of its own) frees its worker at once; its answer is written on a worker once known. Until then it keeps
 * its permit and its body's place in the heap budget, and its connection reads no further request, as while it
 * ran: what waits for the log stays within the same bounds as what waits for a worker.
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
    private final PublishEndpoint publishes;
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
     * @param publishes           the handler of publish requests
     * @param publishesOnSelector whether a publish that never blocks may run on the selector thread: not
     *                            when the event log waits (for its commit or its stream: such a publish may
     *                            also be answered later) or the publisher writes to subscribers with blocking
     *                            writes
     * @param permits             the number of requests that may be running or waiting for a worker at once
     */
    public AdmissionControl(HttpHandler streams, String streamsPath, PublishEndpoint publishes,
                            boolean publishesOnSelector, HttpHandler jersey,
                            Executor workers, int permits, CorsPolicy cors, RequestBodies bodies) {
        this.streams = streams;
        this.streamsPath = streamsPath;
        this.publishes = publishes;
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
        boolean publish = publishes.handles(request.getRequestURI());
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
                // The log answers at once (publishesOnSelector): the answer is in the response.
                serve(true, request, response, arrival);
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
                body.release();
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
            workers.execute(() -> serveAway(publish, request, response, body, suspension, connection));
        } catch (RejectedExecutionException e) {
            permits.release();
            body.release();
            refuse(request, response, suspension, "it is shutting down");
            SuspendedChains.ended(connection);
        }
    }

    /**
     * Serves the request on a worker. Its connection goes on once the answer is in the response: at once, or,
     * for a publish answered later, once that answer is known and written.
     */
    private void serveAway(boolean publish, Request request, Response response, RequestBodies.Body body,
                           Suspension suspension, Connection<?> connection) {
        PublishEndpoint.LaterAnswer later = null;
        boolean served = false;
        try {
            later = serve(publish, request, response, suspension);
            served = true;
        } finally {
            if (later == null) {
                if (!served && !suspension.ended()) {
                    unanswered(connection);
                }
                answered(response, body, suspension, connection);
            } else {
                PublishEndpoint.LaterAnswer answer = later;
                later.known().whenComplete((ignored, failure) -> answerKnown(answer, response, body, suspension,
                        connection));
            }
        }
    }

    /**
     * On one of the event log's threads, where nothing may block: the answer is written on a worker, as the
     * request was served.
     */
    private void answerKnown(PublishEndpoint.LaterAnswer answer, Response response, RequestBodies.Body body,
                             Suspension suspension, Connection<?> connection) {
        try {
            workers.execute(() -> writeLater(answer, response, body, suspension, connection));
        } catch (RejectedExecutionException shuttingDown) {
            // The workers have stopped, past the stop's grace. The connection is closed unanswered rather than
            // written to from the log's thread; a publisher's retry with its Idempotency-Key learns the ids.
            unanswered(connection);
            answered(response, body, suspension, connection);
        }
    }

    private void writeLater(PublishEndpoint.LaterAnswer answer, Response response, RequestBodies.Body body,
                            Suspension suspension, Connection<?> connection) {
        boolean written = false;
        try {
            if (!suspension.ended()) {
                answer.write(response);
            }
            written = true;
        } catch (RuntimeException e) {
            // The client went while the answer was written: the response was being taken back.
            LOG.debug("could not answer a publish: {}", e.toString());
        } finally {
            if (!written) {
                unanswered(connection);
            }
            answered(response, body, suspension, connection);
        }
    }

    /**
     * A request whose answer cannot be written: the workers have stopped, the client went while it was written,
     * or an error no handler answers (the heap exhausted). Resumed as it is, its response would end as an empty
     * 200, which a publisher would take for stored. Its connection is closed instead; a publisher retries with its
     * {@code Idempotency-Key}.
     */
    private static void unanswered(Connection<?> connection) {
        connection.closeSilently();
    }

    /**
     * The request served away has its answer: its body leaves the heap budget, the response ends, the connection
     * reads its next request, and the permit is free.
     */
    private void answered(Response response, RequestBodies.Body body, Suspension suspension,
                          Connection<?> connection) {
        try {
            body.release();
            suspension.resume(response);
        } finally {
            SuspendedChains.ended(connection);
            permits.release();
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
     * Runs the publish handler or Jersey; a failure of its own is a 500 with an incident id, as Grizzly would only
     * log it.
     *
     * @param suspension the response's, if it is suspended: once ended, the response is not ours to touch
     * @return a publish's answer still to come, or {@code null} once the response holds the answer
     */
    private PublishEndpoint.LaterAnswer serve(boolean publish, Request request, Response response,
                                              Suspension suspension) {
        try {
            if (publish) {
                return publishes.serve(request, response);
            }
            giveJerseyAHostItCanParse(request);
            jersey.service(request, response);
        } catch (Exception e) {
            if ((suspension == null || !suspension.ended()) && !response.isCommitted()) {
                response.reset();
                try {
                    ErrorBodies.writeFault(response, request.getRequestURI(), e);
                } catch (IOException gone) {
                    LOG.debug("could not answer a failed {}: {}", request.getRequestURI(), gone.toString());
                }
            }
        }
        return null;
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
        jersey.start();
        streams.start();
    }

    @Override
    public void destroy() {
        jersey.destroy();
        streams.destroy();
    }
}

package eu.arrowhead.eventhandler.publish;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.delivery.PublisherWrites;
import eu.arrowhead.eventhandler.http.PublishEndpoint;
import eu.arrowhead.eventhandler.protocol.ErrorBodies;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.protocol.Utf8Rule;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.Caller;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongConsumer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.glassfish.grizzly.http.Method;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /eventhandler/publish} and {@code POST /eventhandler/publish/batch}.
 *
 * <p>A plain Grizzly handler, not a JAX-RS resource: publishing is the one hot path, and Jersey's request
 * pipeline (routing, content negotiation, filters, entity providers) cost it more than everything else the
 * server does for a publish: on the 2-core machine, {@code scripts/bench A} (kept-alive row) went from p50
 * 0.78 ms, 908 publishes/s to p50 0.36 ms, 2 062/s with this handler alone, still on a worker (the other
 * steps are in docs/architecture.md). The checks JAX-RS made are made here, with the same answers: 405 for
 * another method, 415 for a body that is not JSON (a missing Content-Type is taken as JSON).
 *
 * <p>The body is read as bytes, its bytes checked ({@link Utf8Rule}) and parsed here, and every JSON error
 * turns into a precise 400. The front door
 * ({@link eu.arrowhead.eventhandler.http.AdmissionControl}) calls it only once the whole body has arrived
 * within {@code publish.max-request-bytes}, so reading it never blocks. The answer is one number.
 *
 * <p>Every event is checked with {@link Authorizer#requirePublish} before any is accepted: in secure mode a
 * batch with one event the caller may not publish is refused whole (403).
 *
 * <p>A request with an {@code Idempotency-Key} header hands its key to the event log with its events: when it
 * repeats a recent request, a publisher's retry after a lost answer, the log answers with the first attempt's
 * ids and publishes nothing twice.
 *
 * <p>A cluster's log has the ids only once the stream acknowledges the events: the handler then returns the
 * answer to come ({@link AwaitedIds}) and its thread goes on with other requests.
 */
public final class PublishHandler implements PublishEndpoint {
    public static final String PATH = "/eventhandler/publish";
    private static final Logger LOG = LoggerFactory.getLogger(PublishHandler.class);
    private static final String BATCH_PATH = PATH + "/batch";

    private final PublisherWrites publisher;
    private final EventLog log;
    private final EventValidator validator;
    private final Authorizer authorizer;
    private final int maxBatchEvents;
    private final LongConsumer handlingNanos;
    private final ObjectReader oneReader = JsonMapper.get().readerFor(EventPublishRequest.class);
    private final ObjectReader batchReader = JsonMapper.get().readerFor(EventPublishRequest[].class);

    /**
     * @param publisher     the event log's append, together with the writes to subscribers it causes
     * @param log           the event log, asked before a body is parsed whether it can take an event at all
     * @param handlingNanos told how long each accepted publish took to handle, in nanoseconds
     */
    public PublishHandler(PublisherWrites publisher, EventLog log, EventValidator validator, Authorizer authorizer,
                          int maxBatchEvents, LongConsumer handlingNanos) {
        this.publisher = publisher;
        this.log = log;
        this.validator = validator;
        this.authorizer = authorizer;
        this.maxBatchEvents = maxBatchEvents;
        this.handlingNanos = handlingNanos;
    }

    @Override
    public boolean handles(String path) {
        return PATH.equals(path) || BATCH_PATH.equals(path);
    }

    @Override
    public LaterAnswer serve(Request request, Response response) {
        String path = request.getRequestURI();
        long start = System.nanoTime();
        CompletableFuture<long[]> ids;
        try {
            ids = handle(request, response, path);
        } catch (IOException | RuntimeException e) {
            write(response, path, null, e, start);
            return null;
        }
        if (!ids.isDone()) {
            return new AwaitedIds(ids, path, start);
        }
        write(response, path, ids, start);
        return null;
    }

    /** The ids of a publish that the event log gives once its stream has acknowledged the events. */
    private final class AwaitedIds implements LaterAnswer {
        private final CompletableFuture<long[]> ids;
        private final String path;
        private final long start;

        AwaitedIds(CompletableFuture<long[]> ids, String path, long start) {
            this.ids = ids;
            this.path = path;
            this.start = start;
        }

        @Override
        public CompletionStage<?> known() {
            return ids;
        }

        @Override
        public void write(Response response) {
            PublishHandler.this.write(response, path, ids, start);
        }
    }

    /** Writes the answer to a publish whose ids are known, or have failed. */
    private void write(Response response, String path, CompletableFuture<long[]> ids, long start) {
        try {
            write(response, path, ids.join(), null, start);
        } catch (CompletionException | CancellationException e) {
            write(response, path, null, e.getCause() == null ? e : e.getCause(), start);
        }
    }

    /** Writes the ids, or the error the publish failed with. */
    private void write(Response response, String path, long[] ids, Throwable failure, long start) {
        try {
            if (failure == null) {
                byte[] answer = answer(path, ids);
                handlingNanos.accept(System.nanoTime() - start);
                response.setStatus(200);
                response.setContentType("application/json");
                response.setContentLength(answer.length);
                response.getOutputStream().write(answer);
            } else if (failure instanceof RequestException e) {
                ErrorBodies.write(response, e.status(), e.exceptionType(), e.getMessage(), path, null);
            } else if (failure instanceof JsonProcessingException e) {
                ErrorBodies.write(response, 400, ExceptionType.BAD_PAYLOAD, JsonMapper.describe(e), path, null);
            } else if (failure instanceof UnavailableException e) {
                ErrorBodies.write(response, 503, ExceptionType.UNAVAILABLE, e.getMessage(), path, 1);
            } else {
                ErrorBodies.writeFault(response, path, failure);
            }
        } catch (IOException gone) {
            LOG.debug("could not answer a publish to {}: {}", path, gone.toString());
        }
    }

    private CompletableFuture<long[]> handle(Request request, Response response, String path) throws IOException {
        if (request.getMethod() != Method.POST) {
            response.setHeader("Allow", "POST");
            throw new RequestException(405, ExceptionType.INVALID_PARAMETER,
                    "this endpoint does not take that method; allowed: [POST]");
        }
        if (!isJson(request.getContentType())) {
            throw new RequestException(415, ExceptionType.BAD_PAYLOAD,
                    "the body must be JSON: send Content-Type: application/json");
        }
        Caller caller = Caller.of(request);
        authorizer.requireIdentified(caller);
        String key = IdempotencyKeys.checkedKey(request.getHeader(IdempotencyKeys.HEADER));
        byte[] body = read(request.getInputStream());
        PublishKey keyed = key == null ? PublishKey.NONE
                : new PublishKey(String.valueOf(caller.systemName()), key, IdempotencyKeys.fingerprint(path, body));
        // A retry after a lost answer gets that answer first, whatever has changed since: the log behind, the
        // database down, the clock moved past the timestamp tolerance.
        long[] earlier = keyed.present() ? log.answered(keyed) : null;
        if (earlier != null) {
            return CompletableFuture.completedFuture(earlier);
        }
        // A flood the event log cannot keep up with is refused before its body is parsed: parsing is what an
        // overloaded server would spend its time on, for nothing.
        log.requireRoom(body.length);
        return path.equals(PATH) ? publishOne(caller, keyed, body) : publishBatch(caller, keyed, body);
    }

    /** The answer to a publish whose events got {@code ids}. */
    private static byte[] answer(String path, long[] ids) {
        if (path.equals(PATH)) {
            return ("{\"id\":" + ids[0] + "}").getBytes(StandardCharsets.US_ASCII);
        }
        StringBuilder out = new StringBuilder(16 + ids.length * 8).append("{\"ids\":[");
        for (int i = 0; i < ids.length; i++) {
            out.append(i == 0 ? "" : ",").append(ids[i]);
        }
        return out.append("]}").toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** As JAX-RS matched {@code @Consumes(application/json)}: parameters and wildcards allowed, none is JSON. */
    private static boolean isJson(String contentType) {
        if (contentType == null || contentType.isBlank()) {
            return true;
        }
        int end = contentType.indexOf(';');
        String type = (end < 0 ? contentType : contentType.substring(0, end)).trim().toLowerCase(Locale.ROOT);
        int slash = type.indexOf('/');
        if (slash < 0) {
            return false;
        }
        String main = type.substring(0, slash);
        String sub = type.substring(slash + 1);
        return (main.equals("application") || main.equals("*")) && (sub.equals("json") || sub.equals("*"));
    }

    private CompletableFuture<long[]> publishOne(Caller caller, PublishKey key, byte[] body) throws IOException {
        Utf8Rule.require(body);
        EventPublishRequest request = oneReader.readValue(body);
        IncomingEvent event = validator.validate(request, Instant.now(), "");
        authorizer.requirePublish(caller, event.sourceKey(), event.eventType());
        return publisher.publish(List.of(event), key);
    }

    private CompletableFuture<long[]> publishBatch(Caller caller, PublishKey key, byte[] body) throws IOException {
        Utf8Rule.require(body);
        EventPublishRequest[] requests = batchReader.readValue(body);
        if (requests == null || requests.length == 0) {
            throw RequestException.badPayload("a batch is a JSON array of 1 or more events");
        }
        if (requests.length > maxBatchEvents) {
            throw RequestException.badPayload("a batch holds at most " + maxBatchEvents
                    + " events (publish.max-batch-events); this one has " + requests.length);
        }
        Instant now = Instant.now();
        List<IncomingEvent> events = new ArrayList<>(requests.length);
        for (int i = 0; i < requests.length; i++) {
            events.add(validator.validate(requests[i], now, "event " + i + ": "));
        }
        for (int i = 0; i < events.size(); i++) {
            try {
                authorizer.requirePublish(caller, events.get(i).sourceKey(), events.get(i).eventType());
            } catch (RequestException e) {
                throw new RequestException(e.status(), e.exceptionType(), "event " + i + ": " + e.getMessage());
            }
        }
        return publisher.publish(events, key);
    }

    private static byte[] read(InputStream body) throws IOException {
        byte[] bytes = body.readAllBytes();
        if (bytes.length == 0) {
            throw RequestException.badPayload("the request body is empty; send the event as JSON");
        }
        return bytes;
    }
}

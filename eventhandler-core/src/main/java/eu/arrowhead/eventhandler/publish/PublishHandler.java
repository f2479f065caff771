package eu.arrowhead.eventhandler.publish;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.delivery.PublisherWrites;
import eu.arrowhead.eventhandler.http.ErrorResponses;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.http.RequestException;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.Caller;
import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.HubUnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.io.CharConversionException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;
import org.glassfish.grizzly.http.Method;
import org.glassfish.grizzly.http.server.HttpHandler;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;

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
 * <p>The body is read as bytes and parsed here, and every JSON error turns into a precise 400. The front door
 * ({@link eu.arrowhead.eventhandler.http.AdmissionControl}) calls it only once the whole body has arrived
 * within {@code publish.max-request-bytes}, so reading it never blocks. The answer is one number.
 *
 * <p>Every event is checked with {@link Authorizer#requirePublish} before any is accepted: in secure mode a
 * batch with one event the caller may not publish is refused whole (403).
 *
 * <p>A request with an {@code Idempotency-Key} header is answered from {@link IdempotencyKeys} when it repeats
 * a recent one: a publisher's retry after a lost answer gets the first attempt's ids, and nothing is published
 * twice.
 */
public final class PublishHandler extends HttpHandler {
    public static final String PATH = "/eventhandler/publish";
    private static final String BATCH_PATH = PATH + "/batch";

    private final PublisherWrites publisher;
    private final EventJournal journal;
    private final EventValidator validator;
    private final Authorizer authorizer;
    private final int maxBatchEvents;
    private final Duration commitTimeout;
    private final LongConsumer handlingNanos;
    private final IdempotencyKeys idempotencyKeys;
    private final ObjectReader oneReader = JsonMapper.get().readerFor(EventPublishRequest.class);
    private final ObjectReader batchReader = JsonMapper.get().readerFor(EventPublishRequest[].class);

    /**
     * @param publisher     the hub's publish, together with the writes to subscribers it causes
     * @param journal       the hub's journal, asked before a body is parsed whether it can take an event at all
     * @param commitTimeout longest wait for the event store's commit (store.mode=sync)
     * @param handlingNanos told how long each accepted publish took to handle, in nanoseconds
     * @param idempotencyKeys the answers to recent publishes with an {@code Idempotency-Key}
     */
    public PublishHandler(PublisherWrites publisher, EventJournal journal,
                          EventValidator validator, Authorizer authorizer, int maxBatchEvents, Duration commitTimeout,
                          LongConsumer handlingNanos, IdempotencyKeys idempotencyKeys) {
        this.publisher = publisher;
        this.journal = journal;
        this.validator = validator;
        this.authorizer = authorizer;
        this.maxBatchEvents = maxBatchEvents;
        this.commitTimeout = commitTimeout;
        this.handlingNanos = handlingNanos;
        this.idempotencyKeys = idempotencyKeys;
    }

    /** Whether a request to {@code path} is this handler's. */
    public static boolean handles(String path) {
        return PATH.equals(path) || BATCH_PATH.equals(path);
    }

    @Override
    public void service(Request request, Response response) throws IOException {
        String path = request.getRequestURI();
        byte[] answer;
        try {
            answer = handle(request, response, path);
        } catch (RequestException e) {
            ErrorResponses.write(response, e.status(), e.exceptionType(), e.getMessage(), path, null);
            return;
        } catch (JsonProcessingException e) {
            ErrorResponses.write(response, 400, ExceptionType.BAD_PAYLOAD, JsonMapper.describe(e), path, null);
            return;
        } catch (CharConversionException e) {
            ErrorResponses.write(response, 400, ExceptionType.BAD_PAYLOAD, JsonMapper.describe(e), path, null);
            return;
        } catch (HubUnavailableException e) {
            ErrorResponses.write(response, 503, ExceptionType.UNAVAILABLE, e.getMessage(), path, 1);
            return;
        } catch (RuntimeException e) {
            ErrorResponses.writeFault(response, path, e);
            return;
        }
        response.setStatus(200);
        response.setContentType("application/json");
        response.setContentLength(answer.length);
        response.getOutputStream().write(answer);
    }

    private byte[] handle(Request request, Response response, String path) throws IOException {
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
        if (key == null) {
            return publish(caller, path, null, read(request.getInputStream()));
        }
        byte[] body = read(request.getInputStream());
        IdempotencyKeys.Claim claim = idempotencyKeys.claim(String.valueOf(caller.systemName()), key, path, body);
        if (!claim.fresh()) {
            return answer(path, claim.firstId(), claim.count());
        }
        try {
            return publish(caller, path, claim, body);
        } catch (IOException | RuntimeException e) {
            claim.failed();
            throw e;
        }
    }

    /**
     * @param claim the request's {@link IdempotencyKeys} claim, told the ids once the hub gives them; {@code null}
     *              for a request without a key
     */
    private byte[] publish(Caller caller, String path, IdempotencyKeys.Claim claim, byte[] body) throws IOException {
        // A flood the event store cannot keep up with is refused before its body is parsed: parsing is what an
        // overloaded server would spend its time on, for nothing.
        journal.requireRoom();
        long start = System.nanoTime();
        byte[] answer = path.equals(PATH) ? publishOne(caller, claim, body) : publishBatch(caller, claim, body);
        handlingNanos.accept(System.nanoTime() - start);
        return answer;
    }

    /** The answer to a publish of {@code count} events given ids from {@code firstId}. */
    private static byte[] answer(String path, long firstId, int count) {
        if (path.equals(PATH)) {
            return ("{\"id\":" + firstId + "}").getBytes(StandardCharsets.US_ASCII);
        }
        StringBuilder out = new StringBuilder(16 + count * 8).append("{\"ids\":[");
        for (int i = 0; i < count; i++) {
            out.append(i == 0 ? "" : ",").append(firstId + i);
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

    private byte[] publishOne(Caller caller, IdempotencyKeys.Claim claim, byte[] body) throws IOException {
        EventPublishRequest request = oneReader.readValue(body);
        IncomingEvent event = validator.validate(request, Instant.now(), "");
        authorizer.requirePublish(caller, event.sourceKey(), event.eventType());
        return answer(PATH, accept(List.of(event), claim), 1);
    }

    private byte[] publishBatch(Caller caller, IdempotencyKeys.Claim claim, byte[] body) throws IOException {
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
        return answer(BATCH_PATH, accept(events, claim), events.size());
    }

    /** Publishes and, with store.mode=sync, waits for the commit: the 200 then means "in the log". */
    private long accept(List<IncomingEvent> events, IdempotencyKeys.Claim claim) {
        Hub.Accepted accepted = publisher.publish(events);
        CompletableFuture<Void> committed = accepted.committed();
        if (claim != null) {
            claim.accepted(accepted.firstId(), events.size(), committed);
        }
        if (!committed.isDone() || committed.isCompletedExceptionally()) {
            try {
                committed.get(commitTimeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new HubUnavailableException("the event store did not commit the event within "
                        + commitTimeout.toSeconds() + " s (store.sync-timeout-seconds); it may still be"
                        + " logged and delivered");
            } catch (ExecutionException e) {
                throw e.getCause() instanceof HubUnavailableException unavailable ? unavailable
                        : new HubUnavailableException("the event store failed: " + e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HubUnavailableException("the Event Handler is shutting down");
            }
        }
        return accepted.firstId();
    }

    private static byte[] read(InputStream body) throws IOException {
        byte[] bytes = body.readAllBytes();
        if (bytes.length == 0) {
            throw RequestException.badPayload("the request body is empty; send the event as JSON");
        }
        return bytes;
    }
}

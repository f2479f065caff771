package eu.arrowhead.eventhandler.publish;

import com.fasterxml.jackson.databind.ObjectReader;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.http.RequestException;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.HubUnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;

/**
 * {@code POST /eventhandler/publish} and {@code POST /eventhandler/publish/batch}.
 *
 * <p>The body is read as bytes and parsed here, not by a JAX-RS entity provider: the size limit is
 * enforced while reading (a huge body is never buffered whole), and every JSON error turns into a precise
 * 400. The answer is written as bytes too: it is one number.
 */
@Path("eventhandler/publish")
public final class PublishResource {
    private final Hub hub;
    private final EventValidator validator;
    private final int maxRequestBytes;
    private final int maxBatchEvents;
    private final Duration commitTimeout;
    private final LongConsumer handlingNanos;
    private final ObjectReader oneReader = JsonMapper.get().readerFor(EventPublishRequest.class);
    private final ObjectReader batchReader = JsonMapper.get().readerFor(EventPublishRequest[].class);

    /**
     * @param commitTimeout longest wait for the event store's commit (store.mode=sync)
     * @param handlingNanos told how long each accepted publish took to handle, in nanoseconds
     */
    public PublishResource(Hub hub, EventValidator validator, int maxRequestBytes, int maxBatchEvents,
                           Duration commitTimeout, LongConsumer handlingNanos) {
        this.hub = hub;
        this.validator = validator;
        this.maxRequestBytes = maxRequestBytes;
        this.maxBatchEvents = maxBatchEvents;
        this.commitTimeout = commitTimeout;
        this.handlingNanos = handlingNanos;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public byte[] publish(InputStream body) throws IOException {
        long start = System.nanoTime();
        EventPublishRequest request = oneReader.readValue(read(body));
        IncomingEvent event = validator.validate(request, Instant.now(), "");
        long id = accept(List.of(event));
        handlingNanos.accept(System.nanoTime() - start);
        return ("{\"id\":" + id + "}").getBytes(StandardCharsets.US_ASCII);
    }

    @POST
    @Path("batch")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public byte[] publishBatch(InputStream body) throws IOException {
        long start = System.nanoTime();
        EventPublishRequest[] requests = batchReader.readValue(read(body));
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
        long first = accept(events);
        handlingNanos.accept(System.nanoTime() - start);
        StringBuilder out = new StringBuilder(16 + events.size() * 8).append("{\"ids\":[");
        for (int i = 0; i < events.size(); i++) {
            out.append(i == 0 ? "" : ",").append(first + i);
        }
        return out.append("]}").toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Publishes and, with store.mode=sync, waits for the commit: the 200 then means "in the log". */
    private long accept(List<IncomingEvent> events) {
        Hub.Accepted accepted = hub.publish(events);
        CompletableFuture<Void> committed = accepted.committed();
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

    private byte[] read(InputStream body) throws IOException {
        byte[] bytes = body.readNBytes(maxRequestBytes + 1);
        if (bytes.length > maxRequestBytes) {
            throw RequestException.tooLarge("the request body is larger than " + maxRequestBytes
                    + " bytes (publish.max-request-bytes)");
        }
        if (bytes.length == 0) {
            throw RequestException.badPayload("the request body is empty; send the event as JSON");
        }
        return bytes;
    }

}

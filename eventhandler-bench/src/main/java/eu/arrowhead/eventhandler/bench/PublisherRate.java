package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.publisher.EventPublisher;
import eu.arrowhead.eventhandler.publisher.PublishException;
import eu.arrowhead.eventhandler.publisher.RetryPolicy;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;

/**
 * How fast one publisher, our client library, gets its events acknowledged, as fast as it can: {@code publish}
 * calls one after the other, {@code publishAsync} one request per event, and {@code publishAsync} with
 * {@code maxAsyncBatch}. Every event must get an id, each larger than the one before.
 */
final class PublisherRate {
    static final List<String> COLUMNS = List.of("set-up", "publisher", "events", "wall s", "events/s",
            "EH CPU us/event", "EH+NATS CPU us/event");
    static final int BATCH = 100;
    private static final int WARM_UP_EVENTS = 2000;

    /** The ways an application publishes that the table compares. */
    enum Kind {
        SEQUENTIAL("publish, one call after the other"),
        ASYNC("publishAsync, a request per event"),
        ASYNC_BATCHED("publishAsync, maxAsyncBatch " + BATCH);

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    private PublisherRate() {
    }

    /**
     * Publishes {@code events} events of each kind to {@code node} and adds a row each.
     *
     * @param ehCpuNanos  the Event Handler processes' CPU time so far
     * @param allCpuNanos the CPU time so far of the Event Handler and NATS processes together
     * @return the events per second of each kind
     */
    static List<BigDecimal> rows(String setUp, URI node, int events, LongSupplier ehCpuNanos, LongSupplier allCpuNanos,
                                 List<List<Object>> rows) {
        Clocks clocks = new Clocks(ehCpuNanos, allCpuNanos);
        for (Kind kind : Kind.values()) {
            publish(kind, node, Math.min(events, WARM_UP_EVENTS), clocks); // both JVMs' JIT, on this set-up too
        }
        List<BigDecimal> rates = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            Clocks.Spent spent = publish(kind, node, events, clocks);
            BigDecimal rate = BigDecimal.valueOf(events * 1e9 / spent.wallNanos()).setScale(0, RoundingMode.HALF_UP);
            rates.add(rate);
            rows.add(Arrays.asList(setUp, kind.label, events, ResultTable.seconds(spent.wallNanos()), rate,
                    micros(spent.ehCpuNanos(), events), micros(spent.allCpuNanos(), events)));
            System.err.println("bench: " + setUp + ", " + kind.label + ": " + rate + " events/s");
        }
        return rates;
    }

    /** The wall clock and the CPU time of the Event Handler processes and of those with NATS. */
    private record Clocks(LongSupplier ehCpuNanos, LongSupplier allCpuNanos) {
        record Spent(long wallNanos, long ehCpuNanos, long allCpuNanos) {
        }

        Spent since(Spent start) {
            return new Spent(System.nanoTime() - start.wallNanos, ehCpuNanos.getAsLong() - start.ehCpuNanos,
                    allCpuNanos.getAsLong() - start.allCpuNanos);
        }

        Spent now() {
            return new Spent(System.nanoTime(), ehCpuNanos.getAsLong(), allCpuNanos.getAsLong());
        }
    }

    /**
     * Publishes the events with a publisher of the kind, measured from after its first publish (its connection
     * opened) to the last id, before it closes.
     */
    private static Clocks.Spent publish(Kind kind, URI node, int events, Clocks clocks) {
        // No retries: a failure must show in the numbers, not be hidden by a second attempt.
        EventPublisher.Builder builder = EventPublisher.builder(node).retryPolicy(RetryPolicy.NONE)
                .maxQueuedBytes(256L << 20);
        if (kind == Kind.ASYNC_BATCHED) {
            builder.maxAsyncBatch(BATCH);
        }
        try (EventPublisher publisher = builder.build()) {
            publisher.publish(EventPublishRequest.of("publisher-rate", "connect"));
            Clocks.Spent start = clocks.now();
            List<Long> ids = new ArrayList<>(events);
            if (kind == Kind.SEQUENTIAL) {
                for (int i = 0; i < events; i++) {
                    ids.add(publisher.publish(event(i)));
                }
            } else {
                List<CompletableFuture<Long>> futures = new ArrayList<>(events);
                for (int i = 0; i < events; i++) {
                    futures.add(publisher.publishAsync(event(i)));
                }
                for (CompletableFuture<Long> future : futures) {
                    ids.add(future.get());
                }
            }
            Clocks.Spent spent = clocks.since(start);
            for (int i = 1; i < ids.size(); i++) {
                if (ids.get(i) <= ids.get(i - 1)) {
                    throw new BenchException(kind.label + ": event " + i + " got id " + ids.get(i) + " after "
                            + ids.get(i - 1));
                }
            }
            return spent;
        } catch (PublishException e) {
            throw new BenchException(kind.label + " failed: " + e.getMessage(), e);
        } catch (ExecutionException e) {
            throw new BenchException(kind.label + " failed: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted", e);
        }
    }

    private static EventPublishRequest event(int i) {
        return EventPublishRequest.of("publisher-rate", "event-" + i);
    }

    private static BigDecimal micros(long nanos, int events) {
        return BigDecimal.valueOf(nanos / 1e3 / events).setScale(1, RoundingMode.HALF_UP);
    }
}

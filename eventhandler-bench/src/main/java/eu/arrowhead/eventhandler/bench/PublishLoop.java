package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;

/**
 * One row of scenario A: a subscriber, a publisher, a warm-up, then events published one after another,
 * each only once the previous one's 200 has come back. An event's latency runs from just before its
 * publish call to the subscriber's parse of its frame. Which publisher and subscriber is the {@link Ends}.
 */
final class PublishLoop {
    static final String EVENT_TYPE = "bench.a";
    private static final int WARM_UP_EVENTS = 500;
    private static final Duration SUBSCRIBE_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(10);

    /** The two ends a loop measures between. */
    interface Ends {
        /** Opens a subscriber whose events go to {@code log}; returns once it is live. */
        Subscription subscribe(URI base, DeliveryLog log, Deadline live);

        Publisher publisher(URI base);
    }

    /** A live subscriber. */
    interface Subscription extends AutoCloseable {
        /** Throws if the subscriber has failed, so that a loop stops instead of waiting out its deadline. */
        void checkAlive();

        @Override
        void close();
    }

    /** A publisher that answers each publish with the event's id. */
    interface Publisher extends AutoCloseable {
        long publish(String eventType, String payload);

        @Override
        void close();
    }

    private final String label;
    private final URI base;
    private final Ends ends;
    private final int events;

    PublishLoop(String label, URI base, Ends ends, int events) {
        this.label = label;
        this.base = base;
        this.ends = ends;
        this.events = events;
    }

    /**
     * @param outcome      what became of the measured events
     * @param publishNanos from the first measured publish to the 200 of the last
     * @param wallNanos    from the first measured publish until the last event arrived or was given up
     * @param publishedIds the id of every event the loop published, warm-up included: each got a 200
     */
    record Result(String label, DeliveryLog.Outcome outcome, long publishNanos, long wallNanos,
                  long[] publishedIds) {

        /** Measured events published per second, one after another. */
        BigDecimal publishRate() {
            return ResultTable.perSecond(outcome.events(), publishNanos);
        }
    }

    Result run() {
        int total = WARM_UP_EVENTS + events;
        DeliveryLog log = new DeliveryLog(EVENT_TYPE, total);
        long start;
        long published;
        long end;
        try (Subscription subscriber = ends.subscribe(base, log,
                Deadline.in(SUBSCRIBE_TIMEOUT, "the " + label + " subscriber to be live"));
             Publisher publisher = ends.publisher(base)) {
            publish(log, subscriber, publisher, 0, WARM_UP_EVENTS, label + " warm-up");
            if (!awaitDelivery(log, subscriber, WARM_UP_EVENTS, label + " warm-up")) {
                throw new BenchException(label + " warm-up: " + log.delivered() + " of " + WARM_UP_EVENTS
                        + " events arrived within " + DELIVERY_TIMEOUT.toSeconds() + " s");
            }
            start = System.nanoTime();
            publish(log, subscriber, publisher, WARM_UP_EVENTS, total, label);
            published = System.nanoTime();
            // Events still missing at the deadline are reported as lost rather than failing the run.
            awaitDelivery(log, subscriber, total, label);
            end = System.nanoTime();
        }
        return new Result(label, log.outcome(WARM_UP_EVENTS, total), published - start, end - start,
                log.publishedIds());
    }

    private static void publish(DeliveryLog log, Subscription subscriber, Publisher publisher, int from, int to,
                                String label) {
        Progress progress = new Progress(label + " events published", to - from);
        for (int seq = from; seq < to; seq++) {
            String payload = Integer.toString(seq);
            log.sent(seq, System.nanoTime());
            log.published(seq, publisher.publish(EVENT_TYPE, payload));
            subscriber.checkAlive();
            progress.update(seq - from + 1);
        }
    }

    private static boolean awaitDelivery(DeliveryLog log, Subscription subscriber, int count, String label) {
        Progress progress = new Progress(label + " events delivered", count);
        return Deadline.in(DELIVERY_TIMEOUT, label + " delivery").await(() -> log.delivered() >= count, () -> {
            subscriber.checkAlive();
            progress.update(log.delivered());
        });
    }
}

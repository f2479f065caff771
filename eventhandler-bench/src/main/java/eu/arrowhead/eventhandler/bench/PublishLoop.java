package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * One row of a latency scenario: subscribers on one topic, publishers that each publish their events one
 * after another (each publish waits for its answer, with no other delay), a warm-up, then the measured
 * events. An event's latency runs from just before its publish call to a subscriber's parse of it, per
 * subscriber, on one clock. Which publisher and subscriber is the {@link Ends}.
 */
final class PublishLoop {
    static final String EVENT_TYPE = "bench.a";
    /** Warm-up events of a lone publisher; several share about as many between them, at least 50 each. */
    private static final int WARM_UP_EVENTS = 500;
    private static final int MIN_WARM_UP_EVENTS = 50;
    private static final Duration SUBSCRIBE_TIMEOUT_BASE = Duration.ofSeconds(10);
    /** A peer's client library connects each subscriber with threads of its own: far slower than a socket. */
    private static final Duration SUBSCRIBE_TIMEOUT_PER_SUBSCRIBER = Duration.ofMillis(100);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(20);

    /** The two ends a loop measures between. */
    interface Ends {
        /** Opens a subscriber whose events go to {@code log}; returns once it is live. */
        Subscription subscribe(URI base, DeliveryLog log, Deadline live);

        /** Opens one subscriber per log, each live before this returns. */
        default Subscription subscribeAll(URI base, List<DeliveryLog> logs, Deadline live) {
            List<Subscription> opened = new ArrayList<>();
            try {
                for (DeliveryLog log : logs) {
                    opened.add(subscribe(base, log, live));
                }
            } catch (RuntimeException e) {
                Subscription.all(opened).close();
                throw e;
            }
            return Subscription.all(opened);
        }

        Publisher publisher(URI base);
    }

    /** Live subscribers. */
    interface Subscription extends AutoCloseable {
        /** Throws if a subscriber has failed, so that a loop stops instead of waiting out its deadline. */
        void checkAlive();

        @Override
        void close();

        /** Several as one: closing closes each, and the first failure to close is thrown after the rest. */
        static Subscription all(List<Subscription> subscriptions) {
            return new Subscription() {
                @Override
                public void checkAlive() {
                    subscriptions.forEach(Subscription::checkAlive);
                }

                @Override
                public void close() {
                    RuntimeException first = null;
                    for (Subscription subscription : subscriptions) {
                        try {
                            subscription.close();
                        } catch (RuntimeException e) {
                            first = first == null ? e : first;
                        }
                    }
                    if (first != null) {
                        throw first;
                    }
                }
            };
        }
    }

    /** A publisher that answers each publish with the event's id, or {@link Sends#NO_ID}. */
    interface Publisher extends AutoCloseable {
        long publish(String eventType, String payload);

        @Override
        void close();
    }

    /**
     * What a row measures: its label, the counts, each event's payload size and the publishers' pace.
     *
     * @param payloadBytes  the payload is the sequence number padded with spaces and letters to this size
     * @param ratePerSecond 0: each publisher publishes as soon as its previous publish is answered; above 0,
     *                      each publishes on a fixed schedule of this many events per second, and an event's
     *                      latency counts from its scheduled time, so that a publish held up by the broker
     *                      delays the events behind it in the numbers too (no coordinated omission)
     */
    record Shape(String label, int publishers, int subscribers, int eventsPerPublisher, int payloadBytes,
                 int ratePerSecond) {

        static Shape of(String label, int publishers, int subscribers, int eventsPerPublisher) {
            return new Shape(label, publishers, subscribers, eventsPerPublisher, 0, 0);
        }

        /** The same shape under another label: a peer's row. */
        Shape labelled(String newLabel) {
            return new Shape(newLabel, publishers, subscribers, eventsPerPublisher, payloadBytes, ratePerSecond);
        }

        int warmUpPerPublisher() {
            return Math.max(MIN_WARM_UP_EVENTS, WARM_UP_EVENTS / publishers);
        }
    }

    private final Shape shape;
    private final URI base;
    private final Ends ends;
    private final Supplier<ResourceSnapshot> server;
    private final String eventType;

    /**
     * A loop on {@link #EVENT_TYPE}.
     *
     * @param server the threads, memory and CPU time of the broker's process, read before and after the row
     */
    PublishLoop(Shape shape, URI base, Ends ends, Supplier<ResourceSnapshot> server) {
        this(shape, base, ends, server, EVENT_TYPE);
    }

    /**
     * A loop on {@code eventType}: a row of its own for subscriptions that outlive their connection (push),
     * so that one row's leftovers could never deliver into another's.
     */
    PublishLoop(Shape shape, URI base, Ends ends, Supplier<ResourceSnapshot> server, String eventType) {
        this.shape = shape;
        this.base = base;
        this.ends = ends;
        this.server = server;
        this.eventType = eventType;
    }

    /**
     * @param outcome      what became of the measured events, summed over the subscribers
     * @param publishNanos from the first measured publish to the answer of the last
     * @param wallNanos    from the first measured publish until the last event arrived or was given up
     * @param before       the broker's process before the measured events
     * @param after        and after them
     * @param publishedIds the id of every event the loop published, warm-up included: each got a 200
     */
    record Result(Shape shape, DeliveryLog.Outcome outcome, long publishNanos, long wallNanos,
                  ResourceSnapshot before, ResourceSnapshot after, long[] publishedIds) {

        String label() {
            return shape.label();
        }

        /** Measured events published, all publishers together. */
        long events() {
            return (long) shape.publishers() * shape.eventsPerPublisher();
        }

        /** Measured events published per second, all publishers together. */
        BigDecimal publishRate() {
            return ResultTable.perSecond(events(), publishNanos);
        }

        /** The broker's CPU time over the measured events, per event published; null where unknown. */
        BigDecimal cpuMicrosPerEvent() {
            return after.cpuMicrosPerSince(before, events());
        }

        /** The same per delivery: per event and subscriber. */
        BigDecimal cpuMicrosPerDelivery() {
            return after.cpuMicrosPerSince(before, outcome.events());
        }
    }

    Result run() {
        int warmUp = shape.warmUpPerPublisher();
        Sends sends = new Sends(shape.publishers(), warmUp + shape.eventsPerPublisher());
        List<DeliveryLog> logs = new ArrayList<>();
        for (int i = 0; i < shape.subscribers(); i++) {
            logs.add(new DeliveryLog(eventType, sends));
        }
        Deadline live = Deadline.in(SUBSCRIBE_TIMEOUT_BASE.plus(
                SUBSCRIBE_TIMEOUT_PER_SUBSCRIBER.multipliedBy(shape.subscribers())),
                "the " + shape.label() + " subscribers to be live");
        long start;
        long published;
        long end;
        ResourceSnapshot before;
        ResourceSnapshot after;
        try (Subscription subscribers = ends.subscribeAll(base, logs, live)) {
            List<Publisher> publishers = new ArrayList<>();
            try {
                for (int p = 0; p < shape.publishers(); p++) {
                    publishers.add(ends.publisher(base));
                }
                publish(sends, publishers, subscribers, 0, warmUp, shape.label() + " warm-up");
                if (!awaitDelivery(logs, subscribers, shape.publishers() * warmUp, shape.label() + " warm-up")) {
                    throw new BenchException(shape.label() + " warm-up: not every subscriber got the "
                            + shape.publishers() * warmUp + " events within " + DELIVERY_TIMEOUT.toSeconds() + " s");
                }
                before = server.get();
                start = System.nanoTime();
                publish(sends, publishers, subscribers, warmUp, sends.perPublisher(), shape.label());
                published = System.nanoTime();
                // Events still missing at the deadline are reported as lost rather than failing the run.
                awaitDelivery(logs, subscribers, sends.size(), shape.label());
                end = System.nanoTime();
                after = server.get();
            } finally {
                publishers.forEach(Publisher::close);
            }
        }
        List<DeliveryLog.Outcome> outcomes = logs.stream().map(log -> log.outcome(warmUp)).toList();
        return new Result(shape, DeliveryLog.Outcome.sum(outcomes), published - start, end - start, before, after,
                sends.publishedIds());
    }

    /** Each publisher publishes its events {@code from} to {@code to} on a thread of its own, all at once. */
    private void publish(Sends sends, List<Publisher> publishers, Subscription subscribers, int from, int to,
                         String label) {
        String padding = padding();
        Schedule schedule = new Schedule(System.nanoTime(), from, shape.ratePerSecond());
        if (publishers.size() == 1) {
            Progress progress = new Progress(label + " events published", to - from);
            for (int index = from; index < to; index++) {
                publishOne(sends, publishers.get(0), sends.seq(0, index), padding, schedule, index);
                subscribers.checkAlive();
                progress.update(index - from + 1);
            }
            return;
        }
        AtomicInteger done = new AtomicInteger();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < publishers.size(); p++) {
            int publisher = p;
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                    for (int index = from; index < to && failure.get() == null; index++) {
                        publishOne(sends, publishers.get(publisher), sends.seq(publisher, index), padding,
                                schedule, index);
                        done.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    failure.compareAndSet(null, new BenchException("interrupted while publishing"));
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }, "bench-publisher-" + p);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        go.countDown();
        int total = publishers.size() * (to - from);
        Progress progress = new Progress(label + " events published", total);
        Deadline.in(DELIVERY_TIMEOUT.multipliedBy(Math.max(1, total / 1000)), label + " publishing").require(
                () -> threads.stream().noneMatch(Thread::isAlive), () -> {
                    if (failure.get() == null) {
                        subscribers.checkAlive();
                    }
                    progress.update(done.get());
                });
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    /** Publishes the event when {@code schedule} says: its {@code index}-th. */
    private void publishOne(Sends sends, Publisher publisher, int seq, String padding, Schedule schedule, int index) {
        long due = schedule.awaitDue(index);
        sends.sent(seq, due != 0 ? due : System.nanoTime());
        sends.published(seq, publisher.publish(eventType, seq + padding));
    }

    /**
     * When each event of a paced publisher is due: the {@code index}-th at {@code start + (index - from) / rate}.
     * A publisher that falls behind publishes at once until it has caught up, so the rate over the run holds.
     */
    record Schedule(long startNanos, int from, int ratePerSecond) {

        /** The due time of a publisher's {@code index}-th event, or 0 when unpaced. */
        long due(int index) {
            if (ratePerSecond == 0) {
                return 0;
            }
            long due = startNanos + (index - from) * 1_000_000_000L / ratePerSecond;
            // 0 means "unpaced": a due time that happens to be 0 is taken a nanosecond later.
            return due == 0 ? 1 : due;
        }

        /** Waits until the {@code index}-th event is due; returns its due time, or 0 when unpaced. */
        long awaitDue(int index) {
            long due = due(index);
            for (long now = System.nanoTime(); due != 0 && now - due < 0; now = System.nanoTime()) {
                LockSupport.parkNanos(due - now);
            }
            return due;
        }
    }

    /** What follows the sequence number in every payload, so that payloads are about {@code payloadBytes}. */
    private String padding() {
        int length = shape.payloadBytes() - 8;
        return length <= 0 ? "" : " " + "x".repeat(length);
    }

    private static boolean awaitDelivery(List<DeliveryLog> logs, Subscription subscribers, int count, String label) {
        int total = count * logs.size();
        Progress progress = new Progress(label + " events delivered", total);
        return Deadline.in(DELIVERY_TIMEOUT, label + " delivery").await(
                () -> logs.stream().allMatch(log -> log.delivered() >= count), () -> {
                    subscribers.checkAlive();
                    progress.update(logs.stream().mapToLong(DeliveryLog::delivered).sum());
                });
    }
}

package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.config.EventHandlerConfig.WriteMode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The writes that a publish causes, done by the publishing thread itself once the hub's lock is released.
 *
 * <p>{@code queued} (the design): a subscriber whose queue was idle would otherwise have its drain handed
 * to a writer thread, one more wake-up between the publish and the socket. The publisher runs that drain
 * itself instead: the same non-blocking writes (never more than the socket takes; the rest is left to a
 * writer), after the hub's lock, so nobody waits for it but this publisher's own 200. Under load a
 * subscriber's drain is usually already scheduled and the event just joins its queue, as before.
 * Measured with {@code scripts/bench A} (kept-alive row) on the 2-core machine: publishes on a worker,
 * p50 0.36 -> 0.32 ms and p99 3.82 -> 0.66 ms; publishes on the selector after warm-up
 * ({@code --events=20000}), p50 0.123 -> 0.088 ms, p99 3.3 -> 1.9 ms, 7 469 -> 8 405 publishes/s.
 * A large fan-out stays whole on the publisher: sharing 1 000 drains with the two writer threads (a third
 * each, one task per writer) measured p50 54 ms, p99 236 ms in {@code scripts/bench F} (one run), against
 * 12-14 ms and 46-53 ms drained inline: the publisher then answers early and outruns the writers, whose
 * queues grow; draining inline paces it.
 *
 * <p>{@code publisher-thread} (an ablation, for benchmarks only): the publisher writes each matching
 * subscriber's queue in turn, waiting up to {@code subscriber.write-timeout-seconds} for a socket to take
 * each frame, as Jersey's {@code SseBroadcaster} did in the seeds, so a stalled subscriber holds up the
 * publisher, and through the subscriber's monitor every other publisher to it.
 */
public final class PublisherWrites {
    private static final ThreadLocal<PublisherWrites.Batch> CURRENT = new ThreadLocal<>();

    private final WriteMode mode;
    private final long writeTimeoutNanos;

    public PublisherWrites(WriteMode mode, long writeTimeoutNanos) {
        this.mode = mode;
        this.writeTimeoutNanos = writeTimeoutNanos;
    }

    /** Runs {@code publish}, then the writes to the subscribers it offered events to. */
    public <T> T publish(Supplier<T> publish) {
        Batch batch = new Batch(mode == WriteMode.PUBLISHER_THREAD);
        CURRENT.set(batch);
        try {
            return publish.get();
        } finally {
            CURRENT.remove();
            for (Runnable task : batch.tasks) {
                task.run();
            }
            for (SubscriberQueue subscriber : batch.subscribers) {
                if (batch.blocking) {
                    subscriber.writeQueuedBlocking(writeTimeoutNanos);
                } else {
                    subscriber.drainOnThisThread();
                }
            }
        }
    }

    /**
     * Runs {@code task} once the publish running on this thread has released the hub's lock, or at once
     * outside a publish: for a subscriber's offer that must start work elsewhere (push delivery hands its
     * queue to a sender thread), which would otherwise take an executor's lock and wake a thread while every
     * other publisher waits for the hub.
     */
    public static void afterHubLock(Runnable task) {
        Batch batch = CURRENT.get();
        if (batch == null) {
            task.run();
        } else {
            batch.tasks.add(task);
        }
    }

    /** The writes of the publish running on this thread, or {@code null} outside one. */
    static Batch current() {
        return CURRENT.get();
    }

    /** Subscribers whose writing the current publish has taken on. */
    static final class Batch {
        private final boolean blocking;
        private final List<SubscriberQueue> subscribers = new ArrayList<>(4);
        private final List<Runnable> tasks = new ArrayList<>(0);

        private Batch(boolean blocking) {
            this.blocking = blocking;
        }

        boolean blocking() {
            return blocking;
        }

        void add(SubscriberQueue subscriber) {
            subscribers.add(subscriber);
        }
    }
}

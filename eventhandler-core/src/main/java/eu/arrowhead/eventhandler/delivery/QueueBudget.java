package eu.arrowhead.eventhandler.delivery;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that SSE subscribers' queues may take, and the one rule that says when a subscriber has fallen
 * too far behind ({@link #admits}).
 *
 * <p>A queue entry is a reference to a frame that every subscriber of the topic shares, but a subscriber
 * that falls behind keeps its frames alive after the replay window has let them go, so what a queue holds
 * is counted in bytes of frames, each frame once per queue that holds it: an upper bound of the heap they
 * keep. Two bounds:
 * <ul>
 * <li>one subscriber holds at most {@code subscriber.queue-max-bytes};</li>
 * <li>all together hold at most {@code subscriber.total-queue-max-bytes} ({@code total}): once they hold
 *     half of it, a subscriber whose queue would grow past its share of the other half
 *     ({@code total / 2 / subscriber.max-count}) is cut off instead. Whoever holds more than a share is
 *     the first to go, a subscriber that keeps up (whose queue is nearly always empty) is not touched, and
 *     the sum can never pass {@code total}: half of it, plus at most a share for every subscriber.</li>
 * </ul>
 */
final class QueueBudget {
    /** What a queue entry costs beyond its frame: the reference, in an array that may be half empty. */
    static final long ENTRY_BYTES = 8;

    private final long perSubscriber;
    private final long pressure;
    private final long share;
    private final AtomicLong queued = new AtomicLong();
    private volatile long peakQueue;
    private volatile long peakTotal;

    QueueBudget(long perSubscriber, long total, int maxSubscribers) {
        this.perSubscriber = perSubscriber;
        this.pressure = total / 2;
        this.share = total / 2 / maxSubscribers;
    }

    static long cost(int frameBytes) {
        return frameBytes + ENTRY_BYTES;
    }

    /**
     * Whether a subscriber whose queue holds {@code queuedBytes} may queue {@code cost} more; if not, it
     * has fallen too far behind. The only place where that is decided. Reading the total and adding to it
     * later is not one step, but events are offered under the hub's lock: only a heartbeat (a few bytes)
     * can come in between.
     */
    boolean admits(long queuedBytes, long cost) {
        long after = queuedBytes + cost;
        return after <= perSubscriber && (after <= share || queued.get() + cost <= pressure);
    }

    /** Counts bytes a queue took; {@code queueBytes} is what that queue holds now. */
    void took(long cost, long queueBytes) {
        long all = queued.addAndGet(cost);
        // Racy maxima, good enough for a gauge: a lost update is overtaken by the next larger one.
        if (queueBytes > peakQueue) {
            peakQueue = queueBytes;
        }
        if (all > peakTotal) {
            peakTotal = all;
        }
    }

    /** Counts bytes a queue gave back. */
    void released(long cost) {
        queued.addAndGet(-cost);
    }

    /** Bytes all queues hold now. */
    long queued() {
        return queued.get();
    }

    /** The most bytes one queue has held since the server started. */
    long peakQueue() {
        return peakQueue;
    }

    /** The most bytes all queues have held together since the server started. */
    long peakTotal() {
        return peakTotal;
    }
}

package eu.arrowhead.eventhandler.topic;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One publish on its way through the hub, collecting the work its subscribers' offers leave for after the
 * hub's lock: an offer must not block nor wake other threads while every other publisher waits for the
 * lock, so it hands such work here, and the publishing thread does it once the lock is released
 * ({@link #runDeferred}). Passed from {@link Hub#deliver} through each topic to each {@link Subscriber#offer}.
 *
 * <p>Offers that come from no publish (events a durable journal has committed, heartbeats) get
 * {@link #NONE}, which defers nothing: the subscriber hands its work to its own threads instead.
 *
 * <p>Used by one thread: the publishing one; {@link #NONE} holds nothing and is shared.
 */
public final class Publication {
    private static final Logger LOG = LoggerFactory.getLogger(Publication.class);

    /** Outside a publish: nothing can be deferred, and this instance holds nothing. */
    public static final Publication NONE = new Publication(false, 0, null);

    private final boolean blocking;
    private final long blockingWriteTimeoutNanos;
    private final List<Runnable> deferred;

    private Publication(boolean blocking, long blockingWriteTimeoutNanos, List<Runnable> deferred) {
        this.blocking = blocking;
        this.blockingWriteTimeoutNanos = blockingWriteTimeoutNanos;
        this.deferred = deferred;
    }

    /** A publish after which subscribers' sockets are written without blocking ({@code queued}, the design). */
    public static Publication queued() {
        return new Publication(false, 0, new ArrayList<>(4));
    }

    /**
     * A publish after which the publisher writes to each subscriber's socket itself, waiting up to
     * {@code timeoutNanos} for each ({@code subscriber.write-mode=publisher-thread}, a benchmark ablation).
     */
    public static Publication blockingWrites(long timeoutNanos) {
        return new Publication(true, timeoutNanos, new ArrayList<>(4));
    }

    /** Whether the publishing thread writes subscribers' events itself, waiting for their sockets. */
    public boolean blocking() {
        return blocking;
    }

    /** How long a blocking write waits for one socket to take a frame. */
    public long blockingWriteTimeoutNanos() {
        return blockingWriteTimeoutNanos;
    }

    /** Whether work can be deferred to the publishing thread; false for {@link #NONE}. */
    public boolean defers() {
        return deferred != null;
    }

    /**
     * Leaves {@code work} for the publishing thread after the hub's lock; outside a publish, does it at once.
     * Called under the hub's lock.
     */
    public void afterHubLock(Runnable work) {
        if (defers()) {
            deferred.add(work);
        } else {
            work.run();
        }
    }

    /**
     * Does what the offers left, in the order they left it. Called once the hub's lock is released. One
     * piece of work that fails does not keep the others from running: each is a different subscriber's
     * drain or start, and one left undone would stall that subscriber. Nor does it fail the publish, whose
     * events the hub has already accepted.
     */
    public void runDeferred() {
        for (int i = 0, n = deferred.size(); i < n; i++) {
            try {
                deferred.get(i).run();
            } catch (RuntimeException e) {
                LOG.error("work a publish left for after the hub's lock failed", e);
            }
        }
        deferred.clear();
    }
}

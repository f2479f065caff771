package eu.arrowhead.eventhandler.delivery;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Holds the resumes' replays from the event store to {@code store.replay-events-per-second}, all readers
 * together: a replay is catch-up work, and without a bound a few subscribers resuming from the start of a long log
 * take every core from the publishes beside them (on two cores, eight such resumes replayed 80 000 events a
 * second and halved the rate of publishes).
 *
 * <p>A token bucket with a second's burst: a resume of a few events after a short disconnection is never held;
 * a reader that replayed more than the rate allows waits, after it has started its stream, before it takes the
 * next resume. The wait is on the reader's thread, which is the point: the next replay's reads wait with it.
 */
final class ReplayPace {
    private static final long BURST_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final long nanosPerEvent;
    /** When the events replayed so far are paid for; guarded by this. */
    private long paidUpToNanos = System.nanoTime() - BURST_NANOS;

    /** @param eventsPerSecond {@code store.replay-events-per-second}; 0 for no bound */
    ReplayPace(int eventsPerSecond) {
        this.nanosPerEvent = eventsPerSecond == 0 ? 0 : TimeUnit.SECONDS.toNanos(1) / eventsPerSecond;
    }

    /** Called by a reader that has replayed {@code events}: returns once the rate allows them. */
    void replayed(int events) {
        if (nanosPerEvent == 0 || events == 0) {
            return;
        }
        long until;
        synchronized (this) {
            long now = System.nanoTime();
            paidUpToNanos = Math.max(paidUpToNanos, now - BURST_NANOS) + events * nanosPerEvent;
            until = paidUpToNanos;
        }
        for (long left; (left = until - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(this, left);
        }
    }
}

package eu.arrowhead.eventhandler.diagnostics;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets one log line through per interval, and counts the ones held back, for a message a client can cause
 * as fast as it can send requests: a refusal logged every time would let that client flood the log.
 */
public final class LogThrottle {
    private final long intervalNanos;
    private final AtomicLong nextNanos;
    private final AtomicLong held = new AtomicLong();

    public LogThrottle(Duration interval) {
        this.intervalNanos = interval.toNanos();
        this.nextNanos = new AtomicLong(System.nanoTime());
    }

    /**
     * Asks whether a line may be logged now.
     *
     * @return -1 if not (the line is counted as held back); else how many were held back since the last one
     */
    public long pass() {
        long now = System.nanoTime();
        long next = nextNanos.get();
        if (now - next >= 0 && nextNanos.compareAndSet(next, now + intervalNanos)) {
            return held.getAndSet(0);
        }
        held.incrementAndGet();
        return -1;
    }

    /** The interval, for the log line's words. */
    public long intervalSeconds() {
        return intervalNanos / 1_000_000_000L;
    }
}

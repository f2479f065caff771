package eu.arrowhead.eventhandler.subscriber;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Reconnect delays: from {@code min}, doubling after each failure up to {@code max}, each one moved at
 * random by up to ± {@code jitter} of itself (never above {@code max}) so that many subscribers cut off at
 * once do not all come back at the same instant. Not thread-safe: the subscription's thread only.
 */
final class Backoff {
    private final long minNanos;
    private final long maxNanos;
    private final double jitter;
    private final DoubleSupplier random;
    private long nextNanos;

    /**
     * @param random numbers in [0, 1)
     */
    Backoff(Duration min, Duration max, double jitter, DoubleSupplier random) {
        this.minNanos = min.toNanos();
        this.maxNanos = max.toNanos();
        this.jitter = jitter;
        this.random = random;
        this.nextNanos = minNanos;
    }

    /** The delay before the next attempt; the one after it will be twice as long, up to the maximum. */
    Duration next() {
        long base = nextNanos;
        nextNanos = base > maxNanos / 2 ? maxNanos : base * 2;
        double factor = 1 + jitter * (2 * random.getAsDouble() - 1);
        return Duration.ofNanos(Math.min(maxNanos, Math.round(base * factor)));
    }

    /** Starts again from the minimum, after a connection that worked. */
    void reset() {
        nextNanos = minNanos;
    }
}

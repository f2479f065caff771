package eu.arrowhead.eventhandler.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, instead of sleeping and hoping. */
public final class Await {
    private Await() {
    }

    public static void until(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        until(what, timeout, Duration.ofMillis(5), condition);
    }

    /**
     * As {@link #until(String, Duration, BooleanSupplier)}, asking {@code condition} every {@code pollEvery}: for a
     * condition that costs the server under test work of its own (a scrape of its metrics), which a 5 ms poll would
     * take from the load the test measures.
     */
    public static void until(String what, Duration timeout, Duration pollEvery, BooleanSupplier condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            }
            // Poll interval only: the condition, not the passing of time, decides when we go on.
            LockSupport.parkNanos(pollEvery.toNanos());
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }
}

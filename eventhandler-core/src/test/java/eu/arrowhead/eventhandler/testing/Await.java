package eu.arrowhead.eventhandler.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, instead of sleeping and hoping. */
public final class Await {
    private Await() {
    }

    public static void until(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            }
            // Poll interval only: the condition, not the passing of time, decides when we go on.
            LockSupport.parkNanos(5_000_000);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }
}

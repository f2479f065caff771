package eu.arrowhead.eventhandler.bench;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** The time by which something must have happened: every wait of the bench has one, so none can hang. */
final class Deadline {
    private static final Duration POLL = Duration.ofMillis(1);

    private final String what;
    private final Duration timeout;
    private final long end;

    private Deadline(String what, Duration timeout) {
        this.what = what;
        this.timeout = timeout;
        this.end = System.nanoTime() + timeout.toNanos();
    }

    /** A deadline {@code timeout} from now for {@code what}, which names the wait in the failure message. */
    static Deadline in(Duration timeout, String what) {
        return new Deadline(what, timeout);
    }

    boolean passed() {
        return System.nanoTime() - end >= 0;
    }

    /** Whole milliseconds left, at least 1: what socket timeouts take, where 0 would mean forever. */
    int remainingMillis() {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (end - System.nanoTime()) / 1_000_000));
    }

    /** Fails if the deadline has passed. */
    void check() {
        if (passed()) {
            throw expired();
        }
    }

    /**
     * Waits until {@code condition} holds.
     *
     * @param eachPoll runs between checks: progress lines, and checks that fail at once when waiting on
     *                 is hopeless (a stream that ended)
     * @return whether it held before the deadline
     */
    boolean await(BooleanSupplier condition, Runnable eachPoll) {
        return await(condition, eachPoll, POLL);
    }

    /**
     * Like {@link #await(BooleanSupplier, Runnable)}, checking every {@code poll}: for a condition that costs
     * the server a request, so that the wait does not load what it waits for.
     */
    boolean await(BooleanSupplier condition, Runnable eachPoll, Duration poll) {
        while (!condition.getAsBoolean()) {
            if (passed()) {
                return false;
            }
            eachPoll.run();
            LockSupport.parkNanos(poll.toNanos());
            if (Thread.interrupted()) {
                throw new BenchException("interrupted while waiting for " + what);
            }
        }
        return true;
    }

    /** Like {@link #await}, but a condition that does not hold in time is a failure. */
    void require(BooleanSupplier condition, Runnable eachPoll) {
        if (!await(condition, eachPoll)) {
            throw expired();
        }
    }

    private BenchException expired() {
        return new BenchException("timed out after " + timeout.toMillis() / 1000.0 + " s waiting for " + what);
    }
}

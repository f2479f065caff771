package eu.arrowhead.eventhandler.publisher;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an attempt again as a {@link RetryPolicy} says, waiting on the calling thread between attempts, until it
 * succeeds, fails for good, or the policy's deadline or attempts run out.
 */
final class Retrier {
    private static final Logger LOG = LoggerFactory.getLogger(Retrier.class);

    /** One try at something that may fail with a {@link PublishException}. */
    @FunctionalInterface
    interface Attempt<T> {
        /**
         * @param responseTimeout how long this attempt may wait for its answer
         */
        T run(Duration responseTimeout) throws PublishException;
    }

    private final RetryPolicy policy;
    private final Duration readTimeout;

    /**
     * @param readTimeout the longest wait for one answer; an attempt near the deadline waits less
     */
    Retrier(RetryPolicy policy, Duration readTimeout) {
        this.policy = policy;
        this.readTimeout = readTimeout;
    }

    /**
     * Runs {@code attempt} until it succeeds, fails in a way that is not {@link PublishException#retryable()},
     * or the policy gives up.
     *
     * @param what       names the operation in log lines
     * @param key        the publish's {@code Idempotency-Key}, carried by the failure
     * @param startNanos when the publish was asked for ({@link System#nanoTime}): the deadline counts from it
     * @throws PublishException the last failure, with the key, and {@link PublishException.Kind#OUTCOME_UNKNOWN} if
     *                          an attempt may have been published; also when the thread is interrupted while
     *                          waiting, and when the deadline passed before the first attempt (a queued event)
     */
    <T> T run(String what, String key, long startNanos, Attempt<T> attempt) throws PublishException {
        Deadline deadline = policy.deadline().map(d -> new Deadline(d, startNanos + d.toNanos(),
                policy.lastAnswerReserve(readTimeout))).orElse(null);
        if (deadline != null && !deadline.allowsAttemptAfter(Duration.ZERO)) {
            throw PublishException.notSent(what + " not sent: it waited in the queue until its deadline of "
                    + deadline.length.toMillis() + " ms after the call had (nearly) passed", null)
                    .givenUp(key, 0, false, "");
        }
        boolean mayHaveBeenPublished = false;
        for (int attempts = 1; ; attempts++) {
            try {
                return attempt.run(deadline == null ? readTimeout : deadline.responseTimeout(readTimeout));
            } catch (PublishException e) {
                mayHaveBeenPublished |= e.kind() == PublishException.Kind.OUTCOME_UNKNOWN;
                if (!e.retryable() || attempts >= policy.maxAttempts()) {
                    throw e.givenUp(key, attempts, mayHaveBeenPublished, "");
                }
                Duration wait = policy.backoff(attempts, e.retryAfter(), ThreadLocalRandom.current().nextDouble());
                if (deadline != null && !deadline.allowsAttemptAfter(wait)) {
                    throw e.givenUp(key, attempts, mayHaveBeenPublished, " in "
                            + elapsedMillis(startNanos) + " ms, with its deadline of "
                            + deadline.length.toMillis() + " ms too near for another");
                }
                LOG.debug("{} attempt {} failed, next in {} ms: {}", what, attempts, wait.toMillis(), e.getMessage());
                pause(wait, e, key, attempts, mayHaveBeenPublished);
            }
        }
    }

    private static long elapsedMillis(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static void pause(Duration wait, PublishException failure, String key, int attempts,
                              boolean mayHaveBeenPublished) throws PublishException {
        try {
            TimeUnit.NANOSECONDS.sleep(wait.toNanos());
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            PublishException e = PublishException.failed("interrupted while waiting to retry after: "
                    + failure.getMessage(), interrupted);
            e.addSuppressed(failure);
            throw e.givenUp(key, attempts, mayHaveBeenPublished, "");
        }
    }

    /** A publish's deadline: when it ends, and how much of it a last attempt needs for its answer. */
    private record Deadline(Duration length, long endNanos, Duration reserve) {
        Duration left() {
            return Duration.ofNanos(endNanos - System.nanoTime());
        }

        /** The read timeout, or what is left of the deadline if that is less. */
        Duration responseTimeout(Duration readTimeout) {
            Duration left = left();
            return left.compareTo(readTimeout) < 0 ? left : readTimeout;
        }

        /** Whether an attempt after {@code wait} still leaves its answer the time it needs. */
        boolean allowsAttemptAfter(Duration wait) {
            return left().minus(wait).compareTo(reserve) >= 0;
        }
    }
}

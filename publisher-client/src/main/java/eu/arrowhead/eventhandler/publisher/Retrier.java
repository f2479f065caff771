package eu.arrowhead.eventhandler.publisher;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs an attempt again as a {@link RetryPolicy} says, waiting on the calling thread between attempts. */
final class Retrier {
    private static final Logger LOG = LoggerFactory.getLogger(Retrier.class);

    /** One try at something that may fail with a {@link PublishException}. */
    @FunctionalInterface
    interface Attempt<T> {
        T run() throws PublishException;
    }

    private final RetryPolicy policy;

    Retrier(RetryPolicy policy) {
        this.policy = policy;
    }

    /**
     * Runs {@code attempt} until it succeeds, fails in a way that is not {@link PublishException#retryable()},
     * or the policy's attempts are used up.
     *
     * @param what names the operation in log lines
     * @throws PublishException the last failure; also when the thread is interrupted while waiting
     */
    <T> T run(String what, Attempt<T> attempt) throws PublishException {
        for (int attempts = 1; ; attempts++) {
            try {
                return attempt.run();
            } catch (PublishException e) {
                if (!e.retryable() || attempts >= policy.maxAttempts()) {
                    throw attempts == 1 ? e : e.afterAttempts(attempts);
                }
                Duration wait = policy.backoff(attempts, e.retryAfter());
                LOG.debug("{} attempt {} of {} failed, next in {} ms: {}", what, attempts, policy.maxAttempts(),
                        wait.toMillis(), e.getMessage());
                pause(wait, e);
            }
        }
    }

    private static void pause(Duration wait, PublishException failure) throws PublishException {
        try {
            Thread.sleep(wait.toMillis());
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            PublishException e = PublishException.failed("interrupted while waiting to retry after: "
                    + failure.getMessage(), interrupted);
            e.addSuppressed(failure);
            throw e;
        }
    }
}

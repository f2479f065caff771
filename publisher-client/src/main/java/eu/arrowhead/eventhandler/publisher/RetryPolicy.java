package eu.arrowhead.eventhandler.publisher;

import java.time.Duration;
import java.util.Objects;

/**
 * How often, and how patiently, an {@link EventPublisher} tries a publish again after a failure that may
 * pass. Immutable; share one instance as you like.
 *
 * <h2>What is retried</h2>
 * <ul>
 *   <li><b>A connection that could not be opened</b> (refused, connect timeout, unknown host): nothing was
 *       sent, so trying again is safe.</li>
 *   <li><b>{@code 503 Service Unavailable}</b>: the server is at a limit or shutting down and did not
 *       accept the event, so trying again is safe. Its {@code Retry-After} seconds are honoured instead of
 *       the backoff, but the wait is never longer than {@link #maxBackoff()}.</li>
 *   <li><b>An I/O failure after the request was sent</b> (connection reset, read timeout, no answer): the
 *       server may have accepted the event and only its answer was lost.</li>
 * </ul>
 * Any other answer, every {@code 4xx} in particular, is final: the same request would be refused again.
 *
 * <h2>Exactly-once, at-least-once, or at-most-once</h2>
 * Every publish carries an {@code Idempotency-Key} header, the same for all its attempts. This Event Handler
 * remembers keys for {@code publish.idempotency-window-seconds} (120 s by default): a retry of a publish the
 * server had already accepted gets the first attempt's ids and publishes nothing, so retries are
 * <em>exactly once</em> within that window (and while the server keeps the key: at most
 * {@code publish.idempotency-max-keys} of them). A server that ignores the header, such as the Arrowhead 4.x
 * Event Handler, makes a policy with more than one attempt deliver <em>at least once</em>: a retry can publish
 * an event that the server had already accepted, and subscribers then receive it twice, under two different
 * ids. Use {@link #NONE} for <em>at most once</em>: every failure is reported at once, and an event whose
 * answer was lost may or may not have been published.
 *
 * <h2>Backoff</h2>
 * After failed attempt {@code n} the publisher waits {@code initialBackoff × 2^(n-1)}, at most
 * {@code maxBackoff}, then tries again, until {@code maxAttempts} attempts have been made. The waiting thread
 * is the one that called {@code publish} (or the publisher's own thread for
 * {@link EventPublisher#publishAsync publishAsync}); interrupting it ends the wait with a
 * {@link PublishException}.
 */
public final class RetryPolicy {
    /** One attempt, no retry: each failure is reported as it happens (at-most-once delivery). */
    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO);

    /** Three attempts, waiting 100 ms and then 200 ms between them (doubling, at most 2 s). */
    public static final RetryPolicy DEFAULT = new RetryPolicy(3, Duration.ofMillis(100), Duration.ofSeconds(2));

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;

    private RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
        this.maxAttempts = maxAttempts;
        this.initialBackoff = initialBackoff;
        this.maxBackoff = maxBackoff;
    }

    /**
     * Returns a policy.
     *
     * @param maxAttempts    attempts in all, the first included: 1 means no retry
     * @param initialBackoff the wait after the first failed attempt; doubles after each further one
     * @param maxBackoff     the longest wait between two attempts, also for a server's {@code Retry-After}
     * @throws IllegalArgumentException if {@code maxAttempts} is less than 1, a duration is null or negative,
     *                                  or {@code maxBackoff} is shorter than {@code initialBackoff}
     * @return the policy
     */
    public static RetryPolicy of(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
        }
        requireNonNegative("initialBackoff", initialBackoff);
        requireNonNegative("maxBackoff", maxBackoff);
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff (" + maxBackoff + ") must not be shorter than"
                    + " initialBackoff (" + initialBackoff + ")");
        }
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff);
    }

    private static void requireNonNegative(String name, Duration duration) {
        if (duration == null || duration.isNegative()) {
            throw new IllegalArgumentException(name + " must be zero or positive: " + duration);
        }
    }

    /**
     * Attempts in all, the first included.
     *
     * @return 1 or more; 1 means no retry
     */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * The wait after the first failed attempt; it doubles after each further one.
     *
     * @return zero or positive
     */
    public Duration initialBackoff() {
        return initialBackoff;
    }

    /**
     * The longest wait between two attempts, whatever the backoff or the server's {@code Retry-After}.
     *
     * @return at least {@link #initialBackoff()}
     */
    public Duration maxBackoff() {
        return maxBackoff;
    }

    /**
     * The wait after failed attempt {@code failedAttempt} (1 for the first).
     *
     * @param retryAfter the server's {@code Retry-After}, or null when it sent none
     */
    Duration backoff(int failedAttempt, Duration retryAfter) {
        if (retryAfter != null) {
            return min(retryAfter, maxBackoff);
        }
        if (initialBackoff.isZero()) {
            return Duration.ZERO;
        }
        Duration half = maxBackoff.dividedBy(2);
        Duration wait = initialBackoff;
        for (int i = 1; i < failedAttempt; i++) {
            if (wait.compareTo(half) > 0) {
                return maxBackoff; // doubling would pass the cap (and, for huge caps, overflow)
            }
            wait = wait.multipliedBy(2);
        }
        return min(wait, maxBackoff);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RetryPolicy that
                && maxAttempts == that.maxAttempts
                && initialBackoff.equals(that.initialBackoff)
                && maxBackoff.equals(that.maxBackoff);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxAttempts, initialBackoff, maxBackoff);
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff
                + ", maxBackoff=" + maxBackoff + "]";
    }
}

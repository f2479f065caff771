package eu.arrowhead.eventhandler.publisher;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How long, and how patiently, an {@link EventPublisher} tries a publish again after a failure that may
 * pass. Immutable; share one instance as you like.
 *
 * <h2>What is retried</h2>
 * <ul>
 *   <li><b>A connection that could not be opened</b> (refused, connect timeout, unknown host): nothing was
 *       sent, so trying again is safe. This is what a publisher sees while its server restarts.</li>
 *   <li><b>{@code 503 Service Unavailable}</b>: the server is at a limit, starting or shutting down and did
 *       not accept the event, so trying again is safe. Its {@code Retry-After} seconds are honoured instead
 *       of the backoff (a policy with jitter waits up to as long again at random), but the wait is never
 *       longer than {@link #maxBackoff()}.</li>
 *   <li><b>An I/O failure after the request was sent</b> (connection reset, read timeout, no answer): the
 *       server may have accepted the event and only its answer was lost.</li>
 * </ul>
 * Any other answer, every {@code 4xx} in particular, is final: the same request would be refused again.
 *
 * <h2>A deadline, not a count: {@link #DEFAULT}</h2>
 * The default policy retries for up to 60 seconds after the call, with exponential backoff from 100 ms to
 * 2 s and full jitter, however many attempts that takes. Why 60 s:
 * <ul>
 *   <li>A single Event Handler killed and started again serves after 1.5 to 3 s; a cluster node's JetStream
 *       leader election takes up to about 10 s. 60 s covers either several times over, so an application on
 *       the defaults sees no failure through a restart or a failover.</li>
 *   <li>The server remembers each {@code Idempotency-Key} for {@code publish.idempotency-window-seconds}
 *       (in cluster mode {@code cluster.duplicate-window-seconds}), 120 s by default. Every retry must come
 *       while the server still knows the key of the first attempt, or a retry after a lost answer would
 *       publish the event a second time. 60 s, plus at most one read timeout for the last attempt, stays
 *       well inside that window. Do not set a deadline near the server's window.</li>
 *   <li>A 2 s cap keeps a restarted server from being met by every publisher at the same instant (the
 *       jitter spreads them) while adding at most about 2 s to the outage an application sees.</li>
 * </ul>
 * A deadline bounds the whole publish: no attempt starts after it, and each attempt waits for its answer
 * for the {@link EventPublisher.Builder#readTimeout read timeout} or the time left before the deadline,
 * whichever is shorter, so one slow attempt cannot carry the publish past it. (Opening a connection may
 * take up to the {@link EventPublisher.Builder#connectTimeout connect timeout} more, and waiting for a
 * connection that other threads' publishes hold, up to the read timeout.) A retry whose wait
 * would leave less than a tenth of the deadline (or the read timeout, if shorter) for its answer is not
 * made: the publish gives up then rather than send an attempt with no time to be answered.
 *
 * <p>{@link #of} makes a policy bounded by a number of attempts instead, with the exact doubling backoff
 * and no jitter it always had; {@link #withMaxAttempts} adds such a bound to a deadline.
 *
 * <h2>Exactly-once, at-least-once, or at-most-once</h2>
 * Every publish carries an {@code Idempotency-Key} header, the same for all its attempts. This Event Handler
 * remembers keys for {@code publish.idempotency-window-seconds} (120 s by default): a retry of a publish the
 * server had already accepted gets the first attempt's ids and publishes nothing, so retries are
 * <em>exactly once</em> within that window (and while the server keeps the key: at most
 * {@code publish.idempotency-max-keys} of them). A publish that gives up after an attempt whose answer was
 * lost fails with {@link PublishException.Kind#OUTCOME_UNKNOWN} and its key: publish the same event again
 * with that key ({@link EventPublisher#publish(eu.arrowhead.eventhandler.api.EventPublishRequest, String)})
 * to learn its id without publishing it twice. A server that ignores the header, such as the Arrowhead 4.x
 * Event Handler, makes a policy with more than one attempt deliver <em>at least once</em>: a retry can publish
 * an event that the server had already accepted, and subscribers then receive it twice, under two different
 * ids. Use {@link #NONE} for <em>at most once</em>: every failure is reported at once, and an event whose
 * answer was lost may or may not have been published.
 *
 * <h2>Backoff</h2>
 * After failed attempt {@code n} the publisher waits up to {@code initialBackoff × 2^(n-1)}, at most
 * {@code maxBackoff}: exactly that for a policy made by {@link #of}, a random time between zero and that
 * ("full jitter") for one made by {@link #deadline}. The waiting thread is the one that called
 * {@code publish} (or the publisher's own thread for {@link EventPublisher#publishAsync publishAsync});
 * interrupting it ends the wait with a {@link PublishException}.
 */
public final class RetryPolicy {
    private static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(100);
    private static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(2);
    /** The share of the deadline a retry must leave for its answer (capped by the read timeout). */
    private static final int LAST_ANSWER_SHARE = 10;

    /** One attempt, no retry: each failure is reported as it happens (at-most-once delivery). */
    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, null, false);

    /**
     * Retries for 60 s after the call, waiting 100 ms doubling to 2 s with full jitter between attempts: rides
     * out a server's restart and a cluster's leader election, and stays well inside the server's 120 s
     * {@code Idempotency-Key} window (see above).
     */
    public static final RetryPolicy DEFAULT = deadline(Duration.ofSeconds(60));

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    /** Null for a policy bounded by attempts only. */
    private final Duration deadline;
    private final boolean jitter;

    private RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration deadline,
                        boolean jitter) {
        this.maxAttempts = maxAttempts;
        this.initialBackoff = initialBackoff;
        this.maxBackoff = maxBackoff;
        this.deadline = deadline;
        this.jitter = jitter;
    }

    /**
     * Returns a policy that retries until {@code deadline} has passed since the publish was called (since
     * {@link EventPublisher#publishAsync publishAsync} was called, for a queued event), however many attempts
     * that takes, waiting 100 ms doubling to 2 s with full jitter between them. {@link #withBackoff} changes
     * the waits, {@link #withMaxAttempts} adds a bound on the attempts.
     *
     * <p>Keep it well below the server's {@code Idempotency-Key} window (120 s by default): a retry after the
     * server forgot the key of a publish whose answer was lost publishes the event again.
     *
     * @param deadline how long after the call a publish may still be tried; at least 1 ms
     * @throws IllegalArgumentException if {@code deadline} is null or shorter than 1 ms
     * @return the policy
     */
    public static RetryPolicy deadline(Duration deadline) {
        if (deadline == null || deadline.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("deadline must be at least 1 ms: " + deadline);
        }
        return new RetryPolicy(Integer.MAX_VALUE, DEFAULT_INITIAL_BACKOFF, DEFAULT_MAX_BACKOFF, deadline, true);
    }

    /**
     * Returns a policy bounded by a number of attempts, with no deadline: after failed attempt {@code n} it
     * waits exactly {@code initialBackoff × 2^(n-1)}, at most {@code maxBackoff}.
     *
     * @param maxAttempts    attempts in all, the first included: 1 means no retry
     * @param initialBackoff the wait after the first failed attempt; doubles after each further one
     * @param maxBackoff     the longest wait between two attempts, also for a server's {@code Retry-After}
     * @throws IllegalArgumentException if {@code maxAttempts} is less than 1, a duration is null or negative,
     *                                  or {@code maxBackoff} is shorter than {@code initialBackoff}
     * @return the policy
     */
    public static RetryPolicy of(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
        requireAttempts(maxAttempts);
        requireBackoff(initialBackoff, maxBackoff);
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, null, false);
    }

    /**
     * This policy with other waits between attempts.
     *
     * @param initialBackoff the wait (its upper end, with jitter) after the first failed attempt; doubles after
     *                       each further one
     * @param maxBackoff     the longest wait between two attempts, also for a server's {@code Retry-After}
     * @throws IllegalArgumentException if a duration is null or negative, or {@code maxBackoff} is shorter than
     *                                  {@code initialBackoff}
     * @return the new policy; this one is unchanged
     */
    public RetryPolicy withBackoff(Duration initialBackoff, Duration maxBackoff) {
        requireBackoff(initialBackoff, maxBackoff);
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, deadline, jitter);
    }

    /**
     * This policy with a bound on the attempts as well: it gives up at its deadline or after {@code maxAttempts}
     * attempts, whichever comes first.
     *
     * @param maxAttempts attempts in all, the first included: 1 means no retry
     * @throws IllegalArgumentException if {@code maxAttempts} is less than 1
     * @return the new policy; this one is unchanged
     */
    public RetryPolicy withMaxAttempts(int maxAttempts) {
        requireAttempts(maxAttempts);
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, deadline, jitter);
    }

    private static void requireAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
        }
    }

    private static void requireBackoff(Duration initialBackoff, Duration maxBackoff) {
        requireNonNegative("initialBackoff", initialBackoff);
        requireNonNegative("maxBackoff", maxBackoff);
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff (" + maxBackoff + ") must not be shorter than"
                    + " initialBackoff (" + initialBackoff + ")");
        }
    }

    private static void requireNonNegative(String name, Duration duration) {
        if (duration == null || duration.isNegative()) {
            throw new IllegalArgumentException(name + " must be zero or positive: " + duration);
        }
    }

    /**
     * Attempts in all, the first included.
     *
     * @return 1 or more; 1 means no retry; {@link Integer#MAX_VALUE} for a deadline without a bound on attempts
     */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * How long after the call a publish may still be tried, for a policy made by {@link #deadline}.
     *
     * @return the deadline, or empty for a policy bounded by attempts only
     */
    public Optional<Duration> deadline() {
        return Optional.ofNullable(deadline);
    }

    /**
     * The wait after the first failed attempt (its upper end, with jitter); it doubles after each further one.
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

    /** Whether the waits are random between zero and the doubling backoff (policies made by {@link #deadline}). */
    boolean jitter() {
        return jitter;
    }

    /**
     * How long before its deadline a retry must be able to start, so that it has time to be answered.
     *
     * @param readTimeout the publisher's wait for one answer
     */
    Duration lastAnswerReserve(Duration readTimeout) {
        Duration share = deadline.dividedBy(LAST_ANSWER_SHARE);
        return share.compareTo(readTimeout) <= 0 ? share : readTimeout;
    }

    /**
     * The wait after failed attempt {@code failedAttempt} (1 for the first).
     *
     * @param retryAfter the server's {@code Retry-After}, or null when it sent none
     * @param random     a number in [0, 1) that picks the wait with jitter; unused without
     */
    Duration backoff(int failedAttempt, Duration retryAfter, double random) {
        if (retryAfter != null) {
            // A stopping server tells every publisher the same Retry-After: with jitter they come back spread over
            // up to as long again, not all in the same instant.
            Duration spread = jitter ? retryAfter.plus(Duration.ofNanos((long) (retryAfter.toNanos() * random)))
                    : retryAfter;
            return min(spread, maxBackoff);
        }
        if (initialBackoff.isZero()) {
            return Duration.ZERO;
        }
        Duration ceiling = doubled(failedAttempt);
        return jitter ? Duration.ofNanos((long) (ceiling.toNanos() * random)) : ceiling;
    }

    private Duration doubled(int failedAttempt) {
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
                && maxBackoff.equals(that.maxBackoff)
                && Objects.equals(deadline, that.deadline)
                && jitter == that.jitter;
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxAttempts, initialBackoff, maxBackoff, deadline, jitter);
    }

    @Override
    public String toString() {
        return "RetryPolicy[" + (deadline == null ? "" : "deadline=" + deadline + ", ")
                + (maxAttempts == Integer.MAX_VALUE ? "" : "maxAttempts=" + maxAttempts + ", ")
                + "initialBackoff=" + initialBackoff + ", maxBackoff=" + maxBackoff
                + (jitter ? ", full jitter" : "") + "]";
    }
}

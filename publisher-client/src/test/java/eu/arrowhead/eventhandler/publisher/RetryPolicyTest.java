package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The policy as a value: its checks, its backoff with and without jitter, its deadline, its equality. */
class RetryPolicyTest {

    @Test
    void defaultRetriesFor60SecondsWaitingAtRandomUpTo100MsDoublingTo2Seconds() {
        RetryPolicy policy = RetryPolicy.DEFAULT;
        assertEquals(Optional.of(Duration.ofSeconds(60)), policy.deadline());
        assertEquals(Integer.MAX_VALUE, policy.maxAttempts());
        assertEquals(Duration.ZERO, policy.backoff(1, null, 0));
        assertEquals(Duration.ofMillis(50), policy.backoff(1, null, 0.5));
        assertEquals(Duration.ofMillis(400), policy.backoff(4, null, 0.5));
        assertEquals(Duration.ofMillis(1500), policy.backoff(6, null, 0.75));
        assertEquals(Duration.ofSeconds(1), policy.backoff(Integer.MAX_VALUE, null, 0.5));
        assertEquals(Duration.ofSeconds(6), policy.lastAnswerReserve(Duration.ofSeconds(30)),
                "a tenth of the deadline is left for the last answer");
        assertEquals(Duration.ofSeconds(2), policy.lastAnswerReserve(Duration.ofSeconds(2)), "or the read timeout");
        assertEquals(RetryPolicy.deadline(Duration.ofSeconds(60)), policy);
        assertEquals("RetryPolicy[deadline=PT1M, initialBackoff=PT0.1S, maxBackoff=PT2S, full jitter]",
                policy.toString());
    }

    @Test
    void aPolicyOfAttemptsWaitsExactly100MsDoublingUpTo2Seconds() {
        RetryPolicy policy = RetryPolicy.of(3, Duration.ofMillis(100), Duration.ofSeconds(2));
        assertEquals(3, policy.maxAttempts());
        assertEquals(Optional.empty(), policy.deadline());
        assertEquals(Duration.ofMillis(100), policy.backoff(1, null, 0));
        assertEquals(Duration.ofMillis(200), policy.backoff(2, null, 0.5));
        assertEquals(Duration.ofMillis(1600), policy.backoff(5, null, 0.9));
        assertEquals(Duration.ofSeconds(2), policy.backoff(6, null, 0));
        assertEquals(Duration.ofSeconds(2), policy.backoff(Integer.MAX_VALUE, null, 0));
    }

    @Test
    void retryAfterReplacesTheBackoffButNeverExceedsMaxBackoff() {
        RetryPolicy policy = RetryPolicy.of(5, Duration.ofMillis(10), Duration.ofSeconds(5));
        assertEquals(Duration.ofSeconds(1), policy.backoff(1, Duration.ofSeconds(1), 0.5));
        assertEquals(Duration.ofSeconds(5), policy.backoff(1, Duration.ofSeconds(120), 0.5));
        assertEquals(Duration.ofSeconds(2), RetryPolicy.DEFAULT.backoff(1, Duration.ofSeconds(120), 0.5));
        // With jitter, publishers told the same Retry-After come back spread over up to as long again.
        assertEquals(Duration.ofSeconds(1), RetryPolicy.DEFAULT.backoff(1, Duration.ofSeconds(1), 0));
        assertEquals(Duration.ofMillis(1500), RetryPolicy.DEFAULT.backoff(1, Duration.ofSeconds(1), 0.5));
        assertEquals(Duration.ofSeconds(2), RetryPolicy.DEFAULT.backoff(1, Duration.ofMillis(1500), 0.9));
    }

    @Test
    void withersMakeNewPoliciesAndLeaveTheirOriginAsItWas() {
        RetryPolicy deadline = RetryPolicy.deadline(Duration.ofSeconds(10));
        RetryPolicy bounded = deadline.withMaxAttempts(4).withBackoff(Duration.ofMillis(10), Duration.ofMillis(20));
        assertEquals(Integer.MAX_VALUE, deadline.maxAttempts());
        assertEquals(Duration.ofMillis(100), deadline.initialBackoff());
        assertEquals(4, bounded.maxAttempts());
        assertEquals(Optional.of(Duration.ofSeconds(10)), bounded.deadline());
        assertEquals(Duration.ofMillis(20), bounded.maxBackoff());
        assertEquals(Duration.ofMillis(10), bounded.backoff(9, null, 0.5));
        assertEquals("RetryPolicy[deadline=PT10S, maxAttempts=4, initialBackoff=PT0.01S, maxBackoff=PT0.02S,"
                + " full jitter]", bounded.toString());
        assertNotEquals(deadline, bounded);
    }

    @Test
    void noneMakesOneAttempt() {
        assertEquals(1, RetryPolicy.NONE.maxAttempts());
        assertEquals(Optional.empty(), RetryPolicy.NONE.deadline());
        assertEquals(RetryPolicy.NONE, RetryPolicy.of(1, Duration.ZERO, Duration.ZERO));
        assertEquals(RetryPolicy.NONE.hashCode(), RetryPolicy.of(1, Duration.ZERO, Duration.ZERO).hashCode());
        assertNotEquals(RetryPolicy.NONE, RetryPolicy.DEFAULT);
        assertNotEquals(RetryPolicy.DEFAULT, RetryPolicy.of(3, Duration.ofMillis(100), Duration.ofSeconds(2)));
    }

    @Test
    void badArgumentsAreRefusedWithAMessageThatNamesThem() {
        assertEquals("maxAttempts must be at least 1: 0", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.of(0, Duration.ZERO, Duration.ZERO)).getMessage());
        assertEquals("initialBackoff must be zero or positive: PT-1S", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.of(2, Duration.ofSeconds(-1), Duration.ZERO)).getMessage());
        assertEquals("maxBackoff must be zero or positive: null", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.of(2, Duration.ZERO, null)).getMessage());
        assertEquals("maxBackoff (PT1S) must not be shorter than initialBackoff (PT2S)",
                assertThrows(IllegalArgumentException.class,
                        () -> RetryPolicy.of(2, Duration.ofSeconds(2), Duration.ofSeconds(1))).getMessage());
        assertEquals("deadline must be at least 1 ms: PT0S", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.deadline(Duration.ZERO)).getMessage());
        assertEquals("deadline must be at least 1 ms: null", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.deadline(null)).getMessage());
        assertEquals("maxAttempts must be at least 1: 0", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.DEFAULT.withMaxAttempts(0)).getMessage());
        assertEquals("initialBackoff must be zero or positive: null", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.DEFAULT.withBackoff(null, Duration.ZERO)).getMessage());
    }
}

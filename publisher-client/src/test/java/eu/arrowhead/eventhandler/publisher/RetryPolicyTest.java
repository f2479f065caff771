package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The policy as a value: its checks, its backoff, its equality. */
class RetryPolicyTest {

    @Test
    void defaultWaits100MsDoublingUpTo2Seconds() {
        RetryPolicy policy = RetryPolicy.DEFAULT;
        assertEquals(3, policy.maxAttempts());
        assertEquals(Duration.ofMillis(100), policy.backoff(1, null));
        assertEquals(Duration.ofMillis(200), policy.backoff(2, null));
        assertEquals(Duration.ofMillis(1600), policy.backoff(5, null));
        assertEquals(Duration.ofSeconds(2), policy.backoff(6, null));
        assertEquals(Duration.ofSeconds(2), policy.backoff(Integer.MAX_VALUE, null));
    }

    @Test
    void retryAfterReplacesTheBackoffButNeverExceedsMaxBackoff() {
        RetryPolicy policy = RetryPolicy.of(5, Duration.ofMillis(10), Duration.ofSeconds(5));
        assertEquals(Duration.ofSeconds(1), policy.backoff(1, Duration.ofSeconds(1)));
        assertEquals(Duration.ofSeconds(5), policy.backoff(1, Duration.ofSeconds(120)));
    }

    @Test
    void noneMakesOneAttempt() {
        assertEquals(1, RetryPolicy.NONE.maxAttempts());
        assertEquals(RetryPolicy.NONE, RetryPolicy.of(1, Duration.ZERO, Duration.ZERO));
        assertEquals(RetryPolicy.DEFAULT, RetryPolicy.of(3, Duration.ofMillis(100), Duration.ofSeconds(2)));
        assertEquals(RetryPolicy.DEFAULT.hashCode(),
                RetryPolicy.of(3, Duration.ofMillis(100), Duration.ofSeconds(2)).hashCode());
        assertNotEquals(RetryPolicy.NONE, RetryPolicy.DEFAULT);
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
    }
}

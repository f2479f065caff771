package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void doublesFromTheMinimumUpToTheMaximumAndStartsAgainAfterAReset() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), 0, () -> 0.5);
        assertEquals(millis(100, 200, 400, 800, 1000, 1000), next(backoff, 6));
        backoff.reset();
        assertEquals(millis(100, 200), next(backoff, 2));
    }

    @Test
    void jitterMovesEachDelayByUpToTheFractionButNeverAboveTheMaximum() {
        Duration min = Duration.ofMillis(100);
        Duration max = Duration.ofMillis(1000);
        assertEquals(millis(80, 160, 320, 640, 800), next(new Backoff(min, max, 0.2, () -> 0), 5));
        assertEquals(millis(120, 240, 480, 960, 1000), next(new Backoff(min, max, 0.2, () -> 1), 5));
    }

    @Test
    void aLongMaximumDoesNotOverflow() {
        Backoff backoff = new Backoff(Duration.ofDays(10_000), Duration.ofDays(100_000), 0, () -> 0.5);
        assertEquals(List.of(Duration.ofDays(10_000), Duration.ofDays(20_000), Duration.ofDays(40_000),
                Duration.ofDays(80_000), Duration.ofDays(100_000), Duration.ofDays(100_000)), next(backoff, 6));
    }

    private static List<Duration> next(Backoff backoff, int count) {
        return Stream.generate(backoff::next).limit(count).toList();
    }

    private static List<Duration> millis(long... values) {
        return java.util.Arrays.stream(values).mapToObj(Duration::ofMillis).toList();
    }
}

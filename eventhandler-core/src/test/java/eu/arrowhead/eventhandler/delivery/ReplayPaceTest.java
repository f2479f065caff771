package eu.arrowhead.eventhandler.delivery;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReplayPaceTest {
    private static long millisTaken(Runnable replay) {
        long start = System.nanoTime();
        replay.run();
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Test
    void aSecondsWorthPassesAtOnceAndMoreWaitsForTheRate() {
        ReplayPace pace = new ReplayPace(1_000);
        long both = millisTaken(() -> {
            long burst = millisTaken(() -> pace.replayed(1_000));
            assertTrue(burst < 500, "a second's worth is the burst, not held: " + burst + " ms");
            pace.replayed(300);
        });
        assertTrue(both >= 300 && both < 5_000, "300 events past the burst at 1 000/s wait 0.3 s: " + both + " ms");
    }

    @Test
    void noBoundNeverWaits() {
        ReplayPace pace = new ReplayPace(0);
        long taken = millisTaken(() -> pace.replayed(10_000_000));
        assertTrue(taken < 500, "store.replay-events-per-second=0 holds nothing: " + taken + " ms");
    }
}

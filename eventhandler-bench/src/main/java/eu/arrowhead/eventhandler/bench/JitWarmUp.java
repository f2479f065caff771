package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.time.Duration;

/**
 * Unmeasured publishing before a server's first measured row. Server and bench start cold in one JVM, and
 * on 2 cores the JIT compilers get little CPU while a loop runs: without this, the row measured first pays
 * for compiling the code every later row uses (scenario A's p50 came out 2 to 3 times higher when measured
 * first than after a minute of load).
 */
final class JitWarmUp {
    private static final int EVENTS_PER_ROUND = 2000;

    private JitWarmUp() {
    }

    /** Publishes to the server at {@code base} for {@code length}, in rounds of {@value #EVENTS_PER_ROUND} events. */
    static void run(URI base, Duration length) {
        if (length.isZero()) {
            return;
        }
        System.err.println("bench: warming up the JIT for " + length.toSeconds() + " s against " + base
                + " (not measured)");
        Deadline warm = Deadline.in(length, "the warm-up");
        PublishLoop loop = new PublishLoop(PublishLoop.Shape.of("warm-up", 1, 2, EVENTS_PER_ROUND),
                base, new RawHttpEnds(false), () -> ResourceSnapshot.UNKNOWN);
        do {
            loop.run();
        } while (!warm.passed());
    }
}

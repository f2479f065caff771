package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * Unmeasured publishing before a server's first measured row. Server and bench start cold in one JVM, and
 * on 2 cores the JIT compilers get little CPU while a loop runs: without this, the row measured first pays
 * for compiling the code every later row uses (scenario A's p50 came out 2 to 3 times higher when measured
 * first than after a minute of load). The rounds alternate between raw HTTP and our client libraries, so that
 * the libraries' rows are measured warm like the raw ones: an application system publishes for hours, and
 * Jersey's client pipeline took some 60 000 publishes to compile (before this, the A-client-libraries row
 * was measured while it did, at half the raw row's rate).
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
        PublishLoop.Shape shape = PublishLoop.Shape.of("warm-up", 1, 2, EVENTS_PER_ROUND);
        List<PublishLoop> loops = List.of(
                new PublishLoop(shape, base, new RawHttpEnds(false), () -> ResourceSnapshot.UNKNOWN),
                new PublishLoop(shape, base, new ClientLibraryEnds(), () -> ResourceSnapshot.UNKNOWN));
        for (int round = 0; round == 0 || !warm.passed(); round++) {
            loops.get(round % loops.size()).run();
        }
    }
}

package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Scenario S: one stalled subscriber among {@value #HEALTHY} healthy ones, with 4 KiB events published at
 * {@value #RATE_PER_SECOND} per second. The healthy
 * subscribers' latencies are measured without and then with the stalled one: with per-subscriber queues
 * their p99 must not move. The ablation does the same on a server whose publishing thread writes to each
 * subscriber in turn ({@code subscriber.write-mode=publisher-thread}, the seeds' design), where the stalled
 * subscriber holds up the publisher and everyone behind it until the write timeout cuts it off.
 */
final class SlowSubscriberScenario {
    /** The settings each row makes; the command line may not override them. */
    static final Set<String> ROW_SETTINGS = Set.of("subscriber.write-mode", "subscriber.write-timeout-seconds");
    static final int HEALTHY = 9;
    /**
     * Large enough that the run overfills what the kernel buffers for the stalled socket: on loopback Linux
     * grows a socket's send buffer up to 4 MiB (net.ipv4.tcp_wmem), and only past that does a writer see
     * the stall. 4 000 events of 4 KiB are 16 MiB.
     */
    private static final int PAYLOAD_BYTES = 4096;
    /**
     * Events are published on a schedule, and latency counts from it: a sequential publisher held up by the
     * stalled subscriber would otherwise just publish later, and its events would not show the wait. At
     * 500/s one publisher with 9 subscribers of 4 KiB events fell behind its schedule on 2 cores; 250/s
     * leaves room.
     */
    private static final int RATE_PER_SECOND = 250;
    private static final List<String> WRITE_MODES = List.of("queued", "publisher-thread");
    /** Short, so that the ablation's publisher is held up for seconds rather than the default 10 s. */
    private static final String WRITE_TIMEOUT_SECONDS = "2";
    /** Within this much of the run without the stalled subscriber counts as "did not move". */
    private static final BigDecimal ALLOWED_P99_INCREASE_PERCENT = BigDecimal.valueOf(20);

    private SlowSubscriberScenario() {
    }

    static Scenario.Result run(BenchOptions options, int events) {
        List<PublishLoop.Result> results = new ArrayList<>();
        List<List<Object>> verdicts = new ArrayList<>();
        for (String mode : WRITE_MODES) {
            if (options.target() != null && !mode.equals(WRITE_MODES.get(0))) {
                System.err.println("bench: S with " + mode + " writes needs a server of its own; with --target"
                        + " only the target's own configuration is measured");
                continue;
            }
            Map<String, String> settings = options.target() != null ? Map.of() : Map.of(
                    "subscriber.write-mode", mode, "subscriber.write-timeout-seconds", WRITE_TIMEOUT_SECONDS);
            try (Target target = Scenario.server(options, settings)) {
                RawHttpEnds healthy = new RawHttpEnds(false);
                String label = "S-" + mode + "-writes";
                Shape shape = new Shape(label + "-" + HEALTHY + "-healthy", 1, HEALTHY, events, PAYLOAD_BYTES,
                        RATE_PER_SECOND);
                PublishLoop.Result alone = new PublishLoop(shape, target.baseUri(), healthy, target::snapshot).run();
                PublishLoop.Result withStalled = new PublishLoop(shape.labelled(shape.label() + "+1-stalled"),
                        target.baseUri(), StalledSubscriber.among(healthy), target::snapshot).run();
                results.add(alone);
                results.add(withStalled);
                verdicts.add(verdict(mode, alone, withStalled));
            }
        }
        Scenario.Result loops = LoopTable.of("S", results);
        List<ResultTable> tables = new ArrayList<>(loops.tables());
        tables.add(new ResultTable("S-verdict", List.of("write mode", "healthy p99 ms alone",
                "healthy p99 ms with 1 stalled", "change %", "max ms alone", "max ms with 1 stalled",
                "within " + ALLOWED_P99_INCREASE_PERCENT + "%"), verdicts));
        return new Scenario.Result(tables, loops.failures());
    }

    private static List<Object> verdict(String mode, PublishLoop.Result alone, PublishLoop.Result withStalled) {
        LatencyStats before = LatencyStats.of(alone.outcome().latencyNanos());
        LatencyStats after = LatencyStats.of(withStalled.outcome().latencyNanos());
        BigDecimal change = before.p99() == null || after.p99() == null || before.p99().signum() == 0 ? null
                : after.p99().subtract(before.p99()).multiply(BigDecimal.valueOf(100))
                        .divide(before.p99(), 1, RoundingMode.HALF_UP);
        return Arrays.asList(mode, before.p99(), after.p99(), change, before.max(), after.max(),
                change == null ? null : change.compareTo(ALLOWED_P99_INCREASE_PERCENT) <= 0 ? "yes" : "no");
    }
}

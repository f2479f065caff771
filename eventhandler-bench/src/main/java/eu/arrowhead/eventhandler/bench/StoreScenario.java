package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * Scenario store: what the event store costs, one row per store configuration: off, then async and sync on
 * H2 and on MariaDB. After a warm-up of the JVM, each row gets a server of its own with an empty log, and
 * measures on it
 * <ul>
 *   <li>scenario A's kept-alive loop (after an unmeasured round): the latency from publisher to subscriber,
 *       which a sync store lengthens by a commit, since it delivers an event only once it is written;</li>
 *   <li>the sustained publish rate of {@value #PUBLISHERS} publishers: several, so that publishes wait on
 *       the server together and a sync store can share one commit between them;</li>
 *   <li>with a store, how long after that phase the log had written everything, and whether it holds every
 *       event that got a 200: one it does not hold fails the run, as a lost event does in A.</li>
 * </ul>
 * Then, on async H2, the same with and without subscribers reading a large log ({@link ReadFloodRows}).
 */
final class StoreScenario {
    /** The settings each row makes; the command line may not override them. */
    static final Set<String> ROW_SETTINGS = Set.of("store.mode", "store.url", "store.user", "store.password",
            "store.id-mark-file");
    private static final int PUBLISHERS = 8;
    private static final List<String> COLUMNS = List.of("configuration", "events", "delivered", "lost",
            "duplicated", "out-of-order", "mean ms", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms",
            "sequential publish/s", "sustained publish/s (" + PUBLISHERS + " publishers)", "refused",
            "log catch-up s", "logged ok");
    private static final List<String> MODES = List.of("async", "sync");
    private static final String OFF = "off";
    private static final String H2_DIRECTORY_PREFIX = "eventhandler-bench-h2-";
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofMinutes(5);
    /**
     * Server and bench share one JVM, which starts cold, and on a small machine under load its JIT compilers
     * get little CPU: on 2 cores the sustained rate went from about 500/s in the first 2 s to a level only
     * after about a minute, and a row measured first came out at a third of the same row measured last.
     */
    private static final Duration WARM_UP = Duration.ofSeconds(60);

    private final BenchOptions options;
    private final int events;
    private final Duration sustain;
    private final List<List<Object>> rows = new ArrayList<>();
    private List<List<Object>> readFlood = List.of();
    private final List<String> failures = new ArrayList<>();

    private StoreScenario(BenchOptions options, int events) {
        this.options = options;
        this.events = events;
        this.sustain = Duration.ofSeconds(options.seconds());
    }

    static Scenario.Result run(BenchOptions options, int events) {
        return new StoreScenario(options, events).run();
    }

    private Scenario.Result run() {
        warmUp();
        measure(OFF, OFF, Map.of());
        for (String mode : MODES) {
            try (TempDirectory directory = TempDirectory.create(H2_DIRECTORY_PREFIX)) {
                measure(mode + " H2", mode, StoreSettings.h2(directory));
            }
        }
        try (TempDirectory directory = TempDirectory.create(H2_DIRECTORY_PREFIX)) {
            readFlood = ReadFloodRows.run(config("async", StoreSettings.h2(directory)), events, sustain, failures);
        }
        String url = options.store().mysqlUrl();
        String user = options.store().mysqlUser();
        for (String mode : MODES) {
            try {
                LogTables.drop(url, user);
            } catch (SQLException e) {
                System.err.println("bench: MariaDB at " + url + " not reachable (" + e.getMessage().lines()
                        .findFirst().orElse(e.getClass().getSimpleName()) + "); its rows are skipped");
                break;
            }
            // A new log needs a new id mark: the database was just emptied.
            try (TempDirectory marks = TempDirectory.create(H2_DIRECTORY_PREFIX)) {
                Map<String, String> database = new LinkedHashMap<>(StoreSettings.database(url, user));
                database.put("store.id-mark-file", marks.path().resolve("eventhandler.ids").toString());
                measure(mode + " MariaDB", mode, database);
            }
        }
        return new Scenario.Result(List.of(new ResultTable("store", COLUMNS, rows),
                new ResultTable("store-read-flood", ReadFloodRows.COLUMNS, readFlood)), failures);
    }

    /** The server's configuration: {@code store.mode=mode} on {@code database}, and the command line's. */
    private Map<String, String> config(String mode, Map<String, String> database) {
        Map<String, String> config = new LinkedHashMap<>(database);
        config.put("store.mode", mode);
        // The store's keys cannot take effect without a store, and the server refuses such a start.
        options.overrides().forEach((key, value) -> {
            if (!mode.equals("off") || !key.startsWith("store.")) {
                config.put(key, value);
            }
        });
        return config;
    }

    /**
     * Runs the rows' latency loop and sustained phase, unmeasured, until {@link #WARM_UP} has passed: into
     * an async H2 store, so that the store's code is compiled too, not only the server's and the bench's.
     */
    private void warmUp() {
        String label = "store warm-up";
        try (TempDirectory directory = TempDirectory.create(H2_DIRECTORY_PREFIX);
             Target target = InProcessTarget.start(config("async", StoreSettings.h2(directory)))) {
            progress(label, "the rows' phases on async H2 for " + WARM_UP.toSeconds() + " s, not measured");
            PublishLoop loop = new PublishLoop(PublishLoop.Shape.of(label, 1, 1, events), target.baseUri(),
                    new RawHttpEnds(false), target::snapshot);
            Deadline warm = Deadline.in(WARM_UP, "the warm-up");
            do {
                loop.run();
                SustainedPublish.run(target.baseUri(), PUBLISHERS, sustain);
            } while (!warm.passed());
        }
    }

    /** One row: a server with {@code store.mode=mode} on {@code database}, measured, then stopped. */
    private void measure(String configuration, String mode, Map<String, String> database) {
        String label = "store " + configuration;
        try (Target target = InProcessTarget.start(config(mode, database));
             StoreProbe probe = new StoreProbe(target.baseUri())) {
            URI base = target.baseUri();
            PublishLoop loop = new PublishLoop(PublishLoop.Shape.of(label, 1, 1, events), base, new RawHttpEnds(false),
                    target::snapshot);
            progress(label, "server at " + base + "; warm-up round of " + events + " events, not measured");
            PublishLoop.Result warmUp = loop.run();
            progress(label, "latency: " + events + " events one after another");
            PublishLoop.Result measured = loop.run();
            progress(label, PUBLISHERS + " publishers for " + sustain.toSeconds() + " s");
            SustainedPublish.Result sustained = SustainedPublish.run(base, PUBLISHERS, sustain);
            progress(label, sustained.accepted() + " publishes accepted, " + sustained.refused() + " refused"
                    + (sustained.refusal() == null ? "" : ", the first with " + sustained.refusal()));

            DeliveryLog.Outcome outcome = measured.outcome();
            if (!outcome.clean()) {
                failures.add(label + ": " + outcome.problems());
            }
            List<Object> row = new ArrayList<>(Arrays.asList(configuration, outcome.events(), outcome.delivered(),
                    outcome.lost(), outcome.duplicated(), outcome.outOfOrder()));
            row.addAll(LatencyStats.of(outcome.latencyNanos()).cells());
            row.addAll(List.of(measured.publishRate(), sustained.rate(), sustained.refused()));
            long[] accepted = Stream.of(warmUp.publishedIds(), measured.publishedIds(), sustained.ids())
                    .flatMapToLong(LongStream::of).sorted().toArray();
            row.addAll(OFF.equals(mode) ? Arrays.asList(null, null)
                    : checkLog(label, probe, accepted, sustained.endedNanos()));
            rows.add(row);
        }
    }

    /**
     * The log's columns: how long after the sustained phase the store had written everything, and whether
     * the log holds every event that got a 200.
     *
     * @param accepted the ids of the events that got a 200, ascending
     */
    private List<Object> checkLog(String label, StoreProbe probe, long[] accepted, long phaseEndedNanos) {
        long lastId = accepted[accepted.length - 1];
        progress(label, "waiting for the log to be written up to id " + lastId);
        boolean caughtUp = probe.awaitWritten(lastId, Deadline.in(CATCH_UP_TIMEOUT, label + " log catch-up"),
                label);
        long catchUpNanos = System.nanoTime() - phaseEndedNanos;
        if (!caughtUp) {
            failures.add(label + ": the log had not caught up " + CATCH_UP_TIMEOUT.toSeconds()
                    + " s after the sustained phase");
        }
        progress(label, "checking that the log holds the " + accepted.length + " accepted events");
        long[] missing = probe.missing(accepted);
        if (missing.length > 0) {
            failures.add(label + ": the log lacks " + missing.length + " of the " + accepted.length
                    + " events that got a 200, the first of them id " + missing[0]);
        }
        return Arrays.asList(caughtUp ? ResultTable.seconds(catchUpNanos) : null,
                missing.length == 0 ? "yes" : missing.length + " missing");
    }

    private static void progress(String label, String phase) {
        System.err.println("bench: " + label + ": " + phase);
    }
}

package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Scenario cpu: what an event costs the broker's whole process in CPU (issue 13), ours beside the peers in
 * one run. Rows A (1 publisher, 1 subscriber), B (1 publisher, {@value #B_SUBSCRIBERS} subscribers) and F
 * (1 publisher, {@value #F_SUBSCRIBERS} subscribers) run on
 * <ul>
 *   <li>our server as a process of its own on the packed defaults (the event log written behind, on H2,
 *       in an empty temporary directory), warmed up first for {@code --warm-up-seconds};</li>
 *   <li>another such process with {@code store.mode=off};</li>
 *   <li>each {@link Peer} that runs on this machine.</li>
 * </ul>
 * The CPU time is utime + stime of the broker's process from {@code /proc/PID/stat}, read the same way for
 * every broker (no collection is asked for), so that collections, the JIT and the event log's writer count.
 * Ours is read once its event log has written every accepted event, so that a row pays for writing its own
 * events and not for those before it. A table of issue 13's targets, judged on the run, follows
 * ({@link CpuTargets}).
 */
final class CpuScenario {
    /** The setting each of our rows makes; the command line may not override it. */
    static final Set<String> ROW_SETTINGS = Set.of("store.mode");
    static final int B_SUBSCRIBERS = 6;
    static final int F_SUBSCRIBERS = 200;
    /** F publishes a tenth of the count: with 200 deliveries an event, its rows then last about as long as A's. */
    static final int F_EVENTS_DIVISOR = 10;
    /** Our rows' broker names; a peer's is its {@link Peer#label()}. */
    static final String OURS = "ours";
    static final String OURS_STORE_OFF = "ours-store-off";
    static final String ROW = "row";
    static final String BROKER = "broker";
    static final String PER_EVENT = "server CPU us/event";
    static final String PER_DELIVERY = "server CPU us/delivery";
    private static final List<String> COLUMNS = List.of(ROW, BROKER, "publishers", "subscribers", "events",
            "deliveries", "lost", "duplicated", "out-of-order", "wrong-id", "p50 ms", "p99 ms", "max ms",
            "publish/s", "server CPU ms", PER_EVENT, PER_DELIVERY, "wall s");
    private static final String SERVER_DIRECTORY_PREFIX = "eventhandler-bench-cpu-";
    /** Long enough for an H2 log far behind on a loaded machine; at its default pace it takes milliseconds. */
    private static final Duration LOG_CATCH_UP_TIMEOUT = Duration.ofSeconds(60);

    /** Our server in one configuration: its broker name and its settings beyond the packed defaults. */
    private record Configuration(String broker, String description, Map<String, String> settings) {
    }

    private static final List<Configuration> CONFIGURATIONS = List.of(
            new Configuration(OURS, "the packed defaults (store.mode=async on H2)", Map.of()),
            new Configuration(OURS_STORE_OFF, "store.mode=off", Map.of("store.mode", "off")));

    private CpuScenario() {
    }

    /** A and B publish {@code events} events, F a tenth of them. */
    static Scenario.Result run(BenchOptions options, int events) {
        List<Shape> shapes = List.of(Shape.of("A", 1, 1, events), Shape.of("B", 1, B_SUBSCRIBERS, events),
                Shape.of("F", 1, F_SUBSCRIBERS, Math.max(1, events / F_EVENTS_DIVISOR)));
        // Broker name to its rows, in the order of the shapes.
        Map<String, List<PublishLoop.Result>> rows = new LinkedHashMap<>();
        String logPrefix = ResultWriter.prefix("cpu", Instant.now());
        for (Configuration configuration : CONFIGURATIONS) {
            rows.put(configuration.broker(), ours(configuration, options, shapes,
                    ResultWriter.serverLog(options.out(), logPrefix, configuration.broker())));
        }
        for (Peer peer : Peer.values()) {
            if (!peer.reachable()) {
                System.err.println("bench: " + peer.label() + " is NOT RUNNING at " + peer.hostPort()
                        + ": its rows are skipped, and the targets set against it cannot be judged");
                continue;
            }
            if (peer.snapshot().cpuNanos() == null) {
                System.err.println("bench: " + peer.label() + " answers at " + peer.hostPort() + " but no process"
                        + " of it runs on this machine: its CPU time is n/a");
            }
            rows.put(peer.label(), shapes.stream().map(shape -> new PublishLoop(
                    shape.labelled(shape.label() + "-" + peer.label()), peer.address(), peer.ends(),
                    peer::snapshot).run()).toList());
        }
        return result(shapes, rows);
    }

    /** The rows on a server process of our own in {@code configuration}, after its warm-up. */
    private static List<PublishLoop.Result> ours(Configuration configuration, BenchOptions options,
                                                 List<Shape> shapes, Path log) {
        Map<String, String> settings = new LinkedHashMap<>(options.overrides());
        settings.putAll(configuration.settings());
        try (TempDirectory directory = TempDirectory.create(SERVER_DIRECTORY_PREFIX);
             ServerJvm server = ServerJvm.start(new ServerJvm.Spec(ServerJvm.jar(), null, settings,
                     directory.path(), log));
             StoreProbe store = new StoreProbe(server.baseUri())) {
            System.err.println("bench: server process " + server.pid() + " at " + server.baseUri() + ": "
                    + configuration.description() + (options.overrides().isEmpty() ? "" : ", " + options.overrides())
                    + "; its output goes to " + log);
            JitWarmUp.run(server.baseUri(), options.warmUp());
            String suffix = configuration.broker().equals(OURS) ? "" : "-" + configuration.broker();
            Supplier<ResourceSnapshot> snapshot = () -> {
                if (!store.awaitIdle(Deadline.in(LOG_CATCH_UP_TIMEOUT, "the event log to catch up"))) {
                    throw new BenchException("the event log of " + configuration.description() + " still held"
                            + " unwritten events after " + LOG_CATCH_UP_TIMEOUT.toSeconds() + " s");
                }
                return ProcStatus.read(Long.toString(server.pid())).snapshot();
            };
            List<PublishLoop.Result> results = shapes.stream().map(shape -> new PublishLoop(
                    shape.labelled(shape.label() + suffix), server.baseUri(), new RawHttpEnds(false), snapshot)
                    .run()).toList();
            server.reportWarnings("the server with " + configuration.description());
            return results;
        }
    }

    /** The table, scenario by scenario, each broker's row beside the others; then the targets. */
    private static Scenario.Result result(List<Shape> shapes, Map<String, List<PublishLoop.Result>> rows) {
        List<List<Object>> cells = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (int shape = 0; shape < shapes.size(); shape++) {
            for (Map.Entry<String, List<PublishLoop.Result>> broker : rows.entrySet()) {
                PublishLoop.Result loop = broker.getValue().get(shape);
                cells.add(row(shapes.get(shape).label(), broker.getKey(), loop));
                if (!loop.outcome().clean()) {
                    failures.add(loop.label() + ": " + loop.outcome().problems());
                }
            }
        }
        ResultTable table = new ResultTable("cpu", COLUMNS, cells);
        return new Scenario.Result(List.of(table, CpuTargets.of(table)), failures);
    }

    /**
     * The tables of several runs as one: the medians of the figures, and the targets judged on those (the
     * medians of the runs' judgements would not say whether the median figures meet them).
     */
    static List<ResultTable> medians(List<List<ResultTable>> runs) {
        ResultTable figures = ResultTable.medians(runs.stream().map(tables -> tables.subList(0, 1)).toList()).get(0);
        return List.of(figures, CpuTargets.of(figures));
    }

    private static List<Object> row(String scenario, String broker, PublishLoop.Result loop) {
        DeliveryLog.Outcome outcome = loop.outcome();
        LatencyStats latency = LatencyStats.of(outcome.latencyNanos());
        return new PlottedRow(loop.label(), Arrays.asList(scenario, broker, loop.shape().publishers(),
                loop.shape().subscribers(), loop.events(), outcome.events(), outcome.lost(), outcome.duplicated(),
                outcome.outOfOrder(), outcome.wrongId(), latency.p50(), latency.p99(), latency.max(),
                loop.publishRate(), loop.after().cpuMillisSince(loop.before()), loop.cpuMicrosPerEvent(),
                loop.cpuMicrosPerDelivery(), ResultTable.seconds(loop.wallNanos())), outcome);
    }
}

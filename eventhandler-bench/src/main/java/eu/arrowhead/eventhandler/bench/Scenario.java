package eu.arrowhead.eventhandler.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The measurements {@link Bench} can run, by the name the command line gives them. */
enum Scenario {
    A("A", 2000, onOneServer(LoopScenarios::a)),
    B("B", 9000, onOneServer(LoopScenarios::b)),
    C("C", 1000, onOneServer(LoopScenarios::c)),
    D("D", 3000, WorkerPoolScenario::run),
    F("F", 200, onOneServer(LoopScenarios::f)),
    P("P", 2000, onOneServer(LoopScenarios::p)),
    T("T", 0, ThroughputScenario::run),
    M("M", 10_000, onOneServer(MemoryScenario::run)),
    S("S", 4000, SlowSubscriberScenario::run),
    STORE("store", 2000, StoreScenario::run),
    CPU("cpu", 30_000, CpuScenario::run),
    CLUSTER("cluster", 5000, ClusterScenario::run),
    SECURE_PUSH("secure-push", 10_000, SecurePushScenario::run);

    /**
     * What {@code all} runs, in this order: every scenario but the store's, which has its own command, and
     * M, whose 10 000 subscribers and an in-process server's 10 000 sockets for them need more file
     * descriptors than one process usually may hold: it runs with the server as a process of its own
     * ({@code scripts/bench process M}). P is in: its rows take about 25 s after the warm-up, and it is the
     * suite's only check that push subscribers get every event once and in order. Nor cpu, which starts
     * server processes of its own and has its own command too; nor cluster, which starts NATS servers and
     * server processes; nor secure-push, whose two server processes take about 2 minutes a run.
     */
    static final List<Scenario> ALL = List.of(A, B, C, D, F, P, T, S);

    private final String label;
    private final int defaultCount;
    private final Runner runner;

    Scenario(String label, int defaultCount, Runner runner) {
        this.label = label;
        this.defaultCount = defaultCount;
        this.runner = runner;
    }

    static Optional<Scenario> named(String label) {
        return Arrays.stream(values()).filter(scenario -> scenario.label.equals(label)).findFirst();
    }

    /** The name on the command line and in the result files. */
    String label() {
        return label;
    }

    /** The count that {@code --events} sets when it is not given: events, per publisher, or subscribers. */
    int defaultCount() {
        return defaultCount;
    }

    Result run(BenchOptions options, int count) {
        return runner.run(options, count);
    }

    /**
     * The tables of several runs as one: the medians of each cell (for cpu and secure-push, with their targets
     * judged anew).
     */
    List<ResultTable> medians(List<List<ResultTable>> runs) {
        return switch (this) {
            case CPU -> CpuScenario.medians(runs);
            case SECURE_PUSH -> SecurePushScenario.medians(runs);
            default -> ResultTable.medians(runs);
        };
    }

    /**
     * The server a scenario measures: the {@code --target}, or one started in this JVM with the command
     * line's configuration and then {@code settings}, warmed up for {@code --warm-up-seconds}.
     */
    static Target server(BenchOptions options, Map<String, String> settings) {
        Target target;
        if (options.target() != null) {
            target = new RemoteTarget(options.target(), options.pid());
        } else {
            Map<String, String> config = new LinkedHashMap<>(options.overrides());
            config.putAll(settings);
            target = InProcessTarget.start(config);
        }
        System.err.println("bench: server " + target.baseUri() + (options.target() == null ? " (in-process)" : "")
                + (settings.isEmpty() ? "" : " with " + settings));
        try {
            JitWarmUp.run(target.baseUri(), options.warmUp());
        } catch (RuntimeException e) {
            target.close();
            throw e;
        }
        return target;
    }

    /** A scenario that measures one server, started and warmed up by {@link #server}, stopped afterwards. */
    private static Runner onOneServer(OneServerRunner runner) {
        return (options, count) -> {
            try (Target target = server(options, Map.of())) {
                return runner.run(target, count);
            }
        };
    }

    /** What runs a scenario, from the command line, with {@code count} events or subscribers. */
    @FunctionalInterface
    interface Runner {
        Result run(BenchOptions options, int count);
    }

    /** What runs a scenario on one server with {@code count} events or subscribers. */
    @FunctionalInterface
    interface OneServerRunner {
        Result run(Target target, int count);
    }

    /**
     * @param tables   the numbers, for the terminal and the result files
     * @param failures what went wrong with delivery (lost, duplicated, out of order) or with the event log
     *                 (events missing), one sentence each; empty when all was well
     */
    record Result(List<ResultTable> tables, List<String> failures) {
    }
}

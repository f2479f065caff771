package eu.arrowhead.eventhandler.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** The measurements {@link Bench} can run, by the name the command line gives them. */
enum Scenario {
    A("A", 2000, onOneServer(ScenarioA::run)),
    IDLE("idle", 1000, onOneServer(IdleScenario::run)),
    STORE("store", 2000, StoreScenario::run);

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

    /** The count that {@code --events} sets when it is not given: events, or subscribers. */
    int defaultCount() {
        return defaultCount;
    }

    Result run(BenchOptions options, int count) {
        return runner.run(options, count);
    }

    /**
     * A scenario that measures one server: the {@code --target}, or one started in this JVM with the
     * command line's configuration and stopped afterwards.
     */
    private static Runner onOneServer(OneServerRunner runner) {
        return (options, count) -> {
            try (Target target = options.target() == null ? InProcessTarget.start(options.overrides())
                    : new RemoteTarget(options.target(), options.pid())) {
                System.err.println("bench: scenario " + options.scenario() + " against " + target.baseUri()
                        + (options.target() == null ? " (in-process)" : ""));
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

package eu.arrowhead.eventhandler.bench;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;

/** The attacks {@link Reliability} can run, by the name the command line gives them, in the order of {@code all}. */
enum ReliabilityMode {
    FLOOD("flood", FloodAttack::run),
    STREAMS("streams", IdleStreamsAttack::run),
    BODIES("bodies", SlowBodiesAttack::run),
    CRASH("crash", CrashLoop::run),
    SOAK("soak", Soak::run);

    private final String label;
    private final Runner runner;

    ReliabilityMode(String label, Runner runner) {
        this.label = label;
        this.runner = runner;
    }

    static Optional<ReliabilityMode> named(String label) {
        return Arrays.stream(values()).filter(mode -> mode.label.equals(label)).findFirst();
    }

    String label() {
        return label;
    }

    Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        return runner.run(options, serverLog);
    }

    /** What runs a mode; every server it starts appends its output to {@code serverLog}. */
    @FunctionalInterface
    interface Runner {
        Scenario.Result run(ReliabilityOptions options, Path serverLog);
    }
}

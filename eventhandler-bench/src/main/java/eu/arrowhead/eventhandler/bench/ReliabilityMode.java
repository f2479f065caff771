package eu.arrowhead.eventhandler.bench;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The attacks {@link Reliability} can run, by the name the command line gives them, in the order of {@code all}
 * (push, which came after {@code all} was fixed, runs by its name only).
 */
enum ReliabilityMode {
    FLOOD("flood", FloodAttack::run, true),
    STREAMS("streams", IdleStreamsAttack::run, true),
    BODIES("bodies", SlowBodiesAttack::run, true),
    CRASH("crash", CrashLoop::run, true),
    PUSH("push", PushCrash::run, false),
    SOAK("soak", Soak::run, true);

    private final String label;
    private final Runner runner;
    private final boolean inAll;

    ReliabilityMode(String label, Runner runner, boolean inAll) {
        this.label = label;
        this.runner = runner;
        this.inAll = inAll;
    }

    /** The modes {@code all} runs, in order. */
    static List<ReliabilityMode> all() {
        return Arrays.stream(values()).filter(mode -> mode.inAll).toList();
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

package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Scenario D: 1 publisher and 7 subscribers, one server per worker pool size: the dissertation's 4, 8, 16,
 * 32 and 64, and Grizzly's own default of 2 threads per core, from which the default of
 * {@code server.worker-threads} is chosen.
 */
final class WorkerPoolScenario {
    /** The setting each row makes; the command line may not override it. */
    static final String ROW_SETTING = "server.worker-threads";
    static final int SUBSCRIBERS = 7;
    private static final List<Integer> SIZES = List.of(4, 8, 16, 32, 64);

    private WorkerPoolScenario() {
    }

    static Scenario.Result run(BenchOptions options, int events) {
        int grizzlyDefault = 2 * Runtime.getRuntime().availableProcessors();
        TreeSet<Integer> sizes = new TreeSet<>(SIZES);
        sizes.add(grizzlyDefault);
        List<PublishLoop.Result> results = new ArrayList<>();
        for (int size : sizes) {
            try (Target target = Scenario.server(options, Map.of(ROW_SETTING, Integer.toString(size)))) {
                String label = "D-workers-" + size + (size == grizzlyDefault ? "-grizzly-default" : "");
                results.add(new PublishLoop(Shape.of(label, 1, SUBSCRIBERS, events), target.baseUri(),
                        new RawHttpEnds(false), target::snapshot).run());
            }
        }
        return LoopTable.of("D", results);
    }
}

package eu.arrowhead.eventhandler.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Scenario T: the publish rate, 1 and 8 publishers publishing back to back for a set time (default 10 s),
 * single events and batches of {@value #BATCH} ({@code publish/batch}). A subscriber of the topic checks
 * that every accepted event reached it exactly once and in id order: a rate bought with lost events would
 * be no rate. The events the event store had to drop from its log meanwhile (its buffer overflowed: the
 * writer did not keep up) are counted too.
 */
final class ThroughputScenario {
    static final int BATCH = 100;
    private static final List<Integer> PUBLISHERS = List.of(1, 8);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> COLUMNS = List.of("row", "publishers", "events per request", "seconds",
            "accepted", "refused", "events/s", "delivered", "lost", "duplicated", "out-of-order",
            "dropped from the event log", "server CPU ms", "server CPU us/event",
            "server RSS MiB", "server threads");

    /** The setting the scenario makes; the command line may not override it. */
    static final String ROW_SETTING = "subscriber.queue-max-bytes";
    /**
     * The checking subscriber's queue. It reads on one thread beside 8 publishers on 2 cores, and at batch
     * rates (50 000 events/s) fell more than 1 024 events behind and was cut off as slow, as it should be;
     * here it only checks delivery, so it gets room to catch up: 64 MiB of frames, which the queues' default
     * total (1/8 of the heap) holds from -Xmx512m on.
     */
    private static final String CHECKER_QUEUE_BYTES = "67108864";

    private ThroughputScenario() {
    }

    /** Runs every row, each {@code --seconds} long (the count is not used). */
    static Scenario.Result run(BenchOptions options, int ignored) {
        Map<String, String> settings = options.target() != null ? Map.of()
                : Map.of(ROW_SETTING, CHECKER_QUEUE_BYTES);
        try (Target target = Scenario.server(options, settings)) {
            return run(target, options.seconds());
        }
    }

    private static Scenario.Result run(Target target, int seconds) {
        List<List<Object>> rows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (int batch : List.of(1, BATCH)) {
            for (int publishers : PUBLISHERS) {
                String label = "T-" + publishers + "-publisher" + (publishers == 1 ? "" : "s")
                        + (batch == 1 ? "" : "-batch-" + batch);
                rows.add(row(target, label, publishers, batch, Duration.ofSeconds(seconds), failures));
            }
        }
        return new Scenario.Result(List.of(new ResultTable("T", COLUMNS, rows)), failures);
    }

    private static List<Object> row(Target target, String label, int publishers, int batch, Duration length,
                                    List<String> failures) {
        IdRecorder recorder = new IdRecorder();
        SustainedPublish.Result sustained;
        ResourceSnapshot before;
        ResourceSnapshot after;
        Long droppedBefore;
        Long droppedAfter;
        try (StoreProbe store = new StoreProbe(target.baseUri());
             SseReader subscriber = SseReader.open(new SseEndpoint(target.baseUri(), SustainedPublish.EVENT_TYPE),
                recorder, Deadline.in(Duration.ofSeconds(10), label + " subscriber to be live"))) {
            System.err.println("bench: " + label + ": publishing for " + length.toSeconds() + " s");
            before = target.snapshot();
            droppedBefore = store.droppedEvents();
            sustained = SustainedPublish.run(target.baseUri(), publishers, length, batch);
            after = target.snapshot();
            droppedAfter = store.droppedEvents();
            Progress progress = new Progress(label + " events delivered", sustained.accepted());
            Deadline.in(DELIVERY_TIMEOUT, label + " delivery").await(
                    () -> recorder.count() >= sustained.accepted(), () -> {
                        subscriber.checkAlive();
                        progress.update(recorder.count());
                    });
        }
        IdDelivery delivery = IdDelivery.of(sustained.ids(), recorder.ids());
        if (!delivery.clean()) {
            failures.add(label + ": " + delivery.lost() + " lost, " + delivery.duplicated() + " duplicated, "
                    + delivery.outOfOrder() + " out of order");
        }
        return Arrays.asList(label, publishers, batch, ResultTable.seconds(sustained.nanos()), sustained.accepted(),
                sustained.refused(), sustained.rate(), delivery.delivered(), delivery.lost(), delivery.duplicated(),
                delivery.outOfOrder(), droppedBefore == null ? null : droppedAfter - droppedBefore,
                after.cpuMillisSince(before), after.cpuMicrosPerSince(before, sustained.accepted()),
                ResourceSnapshot.mebibytes(after.rssBytes()),
                after.brokerThreads());
    }
}

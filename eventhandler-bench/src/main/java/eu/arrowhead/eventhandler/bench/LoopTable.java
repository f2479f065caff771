package eu.arrowhead.eventhandler.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The table of a latency scenario: one row per {@link PublishLoop}, each row plotted as well. */
final class LoopTable {
    static final List<String> COLUMNS = List.of("row", "publishers", "subscribers", "events", "deliveries",
            "delivered", "lost", "duplicated", "out-of-order", "wrong-id", "mean ms", "p50 ms", "p90 ms", "p99 ms",
            "p99.9 ms", "max ms", "publish/s", "server CPU ms", "server CPU us/event", "server CPU us/delivery",
            "server RSS MiB", "server threads", "wall s");

    private LoopTable() {
    }

    /** The table, named {@code name}, and a failure line for each row that lost, repeated or reordered. */
    static Scenario.Result of(String name, List<PublishLoop.Result> results) {
        List<List<Object>> rows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (PublishLoop.Result loop : results) {
            rows.add(row(loop));
            if (!loop.outcome().clean()) {
                failures.add(loop.label() + ": " + loop.outcome().problems());
            }
        }
        return new Scenario.Result(List.of(new ResultTable(name, COLUMNS, rows)), failures);
    }

    private static List<Object> row(PublishLoop.Result loop) {
        DeliveryLog.Outcome outcome = loop.outcome();
        PublishLoop.Shape shape = loop.shape();
        List<Object> row = new ArrayList<>(Arrays.asList(loop.label(), shape.publishers(), shape.subscribers(),
                loop.events(), outcome.events(), outcome.delivered(),
                outcome.lost(), outcome.duplicated(), outcome.outOfOrder(), outcome.wrongId()));
        row.addAll(LatencyStats.of(outcome.latencyNanos()).cells());
        row.add(loop.publishRate());
        row.add(loop.after().cpuMillisSince(loop.before()));
        row.add(loop.cpuMicrosPerEvent());
        row.add(loop.cpuMicrosPerDelivery());
        row.add(ResourceSnapshot.mebibytes(loop.after().rssBytes()));
        row.add(loop.after().brokerThreads());
        row.add(ResultTable.seconds(loop.wallNanos()));
        return new PlottedRow(loop.label(), row, outcome);
    }
}

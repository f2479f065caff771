package eu.arrowhead.eventhandler.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Scenario A: one publisher and one subscriber, events one after another, over a kept-alive connection;
 * the same loop with a new connection per publish, as the original Event Handler's clients did, as the
 * baseline; the same loop through our client libraries; and, for scale, the same loop through the
 * {@link Peer} brokers that are running on this machine. Each row's latencies are plotted besides.
 */
final class ScenarioA {
    private static final List<String> COLUMNS = List.of("scenario", "events", "delivered", "lost", "duplicated",
            "out-of-order", "wrong-id", "mean ms", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms",
            "publish/s", "wall s");

    private ScenarioA() {
    }

    static Scenario.Result run(Target target, int events) {
        List<PublishLoop> loops = new ArrayList<>(List.of(
                new PublishLoop("A", target.baseUri(), new RawHttpEnds(false), events),
                new PublishLoop("A-new-connection-per-publish", target.baseUri(), new RawHttpEnds(true), events),
                new PublishLoop("A-client-libraries", target.baseUri(), new ClientLibraryEnds(), events)));
        loops.addAll(peerLoops(events));
        // Server and bench start cold in one JVM: one unmeasured round of every loop first, so that no row
        // pays for the JIT warming up the code another one measures.
        loops.forEach(PublishLoop::run);
        List<PublishLoop.Result> results = loops.stream().map(PublishLoop::run).toList();
        List<List<Object>> rows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (PublishLoop.Result loop : results) {
            rows.add(row(loop));
            if (!loop.outcome().clean()) {
                failures.add(loop.label() + ": " + loop.outcome().problems());
            }
        }
        return new Scenario.Result(List.of(new ResultTable("A", COLUMNS, rows)), failures);
    }

    /** A loop through each peer broker that is running; one that is not is skipped with a note. */
    private static List<PublishLoop> peerLoops(int events) {
        List<PublishLoop> loops = new ArrayList<>();
        for (Peer peer : Peer.values()) {
            if (peer.reachable()) {
                loops.add(new PublishLoop("A-" + peer.label(), peer.address(), peer.ends(), events));
            } else {
                System.err.println("bench: " + peer.label() + " not reachable at " + peer.hostPort()
                        + "; its row is skipped");
            }
        }
        return loops;
    }

    private static List<Object> row(PublishLoop.Result loop) {
        DeliveryLog.Outcome outcome = loop.outcome();
        List<Object> row = new ArrayList<>(Arrays.asList(loop.label(), outcome.events(), outcome.delivered(),
                outcome.lost(), outcome.duplicated(), outcome.outOfOrder(), outcome.wrongId()));
        row.addAll(LatencyStats.of(outcome.latencyNanos()).cells());
        row.add(loop.publishRate());
        row.add(ResultTable.seconds(loop.wallNanos()));
        return new PlottedRow(loop.label(), row, outcome);
    }
}

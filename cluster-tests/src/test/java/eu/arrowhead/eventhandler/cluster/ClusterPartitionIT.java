package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.subscriber.EventSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Freezes under a steady load, one after the other on one cluster (three NATS servers, the stream with 3 replicas,
 * three Event Handler nodes as processes, a subscriber and a publisher starting on each node, both client libraries
 * on their defaults): SIGSTOP for 20 s of the NATS server that leads the stream (a partition: its sockets stay open
 * and silent), then of an Event Handler node, each followed by SIGCONT. No publish may fail, every acknowledged
 * event must reach every subscriber once and in order, and SSE delivery must resume within
 * {@code cluster.timeout-seconds} + 2 s of the stream having a leader again.
 */
class ClusterPartitionIT {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterPartitionIT.class);
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final Duration FREEZE = Duration.ofSeconds(20);
    private static final Duration PACE = Duration.ofMillis(100);
    private static final String TYPE = "partition";

    @TempDir
    Path directory;

    @Test
    void freezingTheStreamLeadersServerAndThenANodeRefusesNoPublishAndLosesNothing() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(directory, 3, "--cluster.outage-grace-millis=1000")) {
            List<ReceivedIds> received = new ArrayList<>();
            List<EventSubscriber> subscribers = new ArrayList<>();
            try (PublishLoad load = PublishLoad.untilStopped(3, PACE, TYPE, cluster::urisFrom, 30)) {
                for (int i = 0; i < 3; i++) {
                    ReceivedIds ids = new ReceivedIds();
                    received.add(ids);
                    subscribers.add(EventSubscriber.builder(cluster.urisFrom(i)).eventTypes(TYPE)
                            .listener(ids).subscriptionListener(ids).subscribe());
                }
                Await.until("every subscriber to be connected", WAIT,
                        () -> received.stream().allMatch(ids -> ids.connections() > 0));
                load.start();
                assertTrue(load.awaitAcknowledged(WAIT), "the first events acknowledged");

                int leader = cluster.streamLeader();
                long frozenAt = System.nanoTime();
                long leaderBackAt;
                try (Freeze frozen = Freeze.of(cluster.nats().pid(leader))) {
                    leaderBackAt = DeliveryCheck.awaitNewLeader(cluster, leader, WAIT);
                    holdUntil(frozenAt);
                }
                long thawedAt = System.nanoTime();
                report("SIGSTOP of the stream leader's server", load, received, frozenAt, leaderBackAt);
                Await.until("every subscriber to receive events after the server's SIGCONT", WAIT,
                        () -> received.stream().allMatch(ids -> ids.firstArrivalAfter(thawedAt).isPresent()));

                long nodeFrozenAt = System.nanoTime();
                try (Freeze frozen = Freeze.of(cluster.node(1).process().pid())) {
                    holdUntil(nodeFrozenAt);
                }
                long nodeThawedAt = System.nanoTime();
                // The stream kept its leader: the other nodes' subscribers never wait for one.
                for (int i : new int[] {0, 2}) {
                    Duration pause = received.get(i).longestPauseAfter(nodeFrozenAt);
                    assertTrue(pause.compareTo(DeliveryCheck.RESUMED_WITHIN) <= 0,
                            "subscriber " + i + " paused " + pause.toMillis() + " ms while node 1 was frozen");
                }
                report("SIGSTOP of node 1", load, received, nodeFrozenAt, nodeThawedAt);

                load.stop();
                load.awaitDone(WAIT);
                // The publish node 1 held through its freeze returns only after SIGCONT.
                LOG.warn("SIGSTOP of node 1: the longest publish, all returned, {} ms",
                        load.longestPublishBetween(nodeFrozenAt, nodeThawedAt).toMillis());
                assertEquals(List.of(), load.failures(), "publishes that failed despite the other nodes");
                DeliveryCheck.everyAcknowledgedOnceInOrder(cluster, received, load.acknowledged(), WAIT);
                // Last, so that a late resume still shows whether anything was refused, lost or reordered.
                DeliveryCheck.resumedWithin(cluster, received, leaderBackAt, "after the frozen leader was replaced",
                        WAIT);
                DeliveryCheck.resumedWithin(cluster, List.of(received.get(1)), nodeThawedAt,
                        "after node 1's SIGCONT", WAIT);
            } finally {
                subscribers.forEach(EventSubscriber::close);
            }
        }
    }

    /** Keeps a freeze for {@link #FREEZE}: the fault's length, not a wait for anything. */
    private static void holdUntil(long frozenAt) throws InterruptedException {
        Thread.sleep(Math.max(0, Duration.ofNanos(frozenAt + FREEZE.toNanos() - System.nanoTime()).toMillis()));
    }

    private static void report(String fault, PublishLoad load, List<ReceivedIds> received, long faultAt,
                               long recoveredAt) {
        List<Long> pauses = received.stream().map(ids -> ids.longestPauseAfter(faultAt).toMillis()).toList();
        List<Long> resumed = received.stream().map(ids -> ids.firstArrivalAfter(recoveredAt).map(Duration::toMillis)
                .orElse(-1L)).toList();
        LOG.warn("{}: recovered after {} ms; the longest publish {} ms; the subscribers' longest pauses {} ms, their"
                + " first event after the recovery {} ms (-1: none yet)", fault,
                Duration.ofNanos(recoveredAt - faultAt).toMillis(),
                load.longestPublishBetween(faultAt, System.nanoTime()).toMillis(), pauses, resumed);
    }
}

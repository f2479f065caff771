package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.subscriber.EventSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Freezes under a steady load, one after the other on one cluster (three NATS servers, the stream with 3 replicas,
 * three Event Handler nodes as processes, a subscriber and a publisher starting on each node, both client libraries
 * on their defaults, and a push subscriber): SIGSTOP for 20 s of an Event Handler node, then of the NATS server that
 * leads the stream (a partition: its sockets stay open and silent), each followed by SIGCONT. No publish may fail,
 * every acknowledged event must reach every subscriber once and in order (push: once but for an event in flight at
 * a freeze), and SSE and push delivery must resume within {@code cluster.timeout-seconds} + 2 s of the stream
 * having a leader again.
 *
 * <p>The node first: a server woken from a freeze may move the push cursor's leadership once more, and a node
 * frozen then cannot acknowledge again to the new leader the event it had acknowledged last; the cursor then sends
 * it again (seen in ClusterConsumerRecoveryIT). That is two faults at once, not what this test is about.
 */
class ClusterPartitionIT {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterPartitionIT.class);
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final Duration FREEZE = Duration.ofSeconds(20);
    private static final Duration PACE = Duration.ofMillis(100);
    private static final String TYPE = "partition";
    /** How soon after a freeze an event pushed before it may still have been unacknowledged. */
    private static final Duration IN_FLIGHT = Duration.ofSeconds(1);

    @TempDir
    Path directory;

    @Test
    void freezingANodeAndThenTheStreamLeadersServerRefusesNoPublishAndLosesNothing() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(directory, 3, "--cluster.outage-grace-millis=1000");
             PushTarget target = new PushTarget()) {
            target.subscribeAt(cluster.urisFrom(0).get(0), "partition", TYPE);
            String cursor = cluster.pushCursor();
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
                Await.until("every subscriber to receive events after the node's SIGCONT", WAIT,
                        () -> received.stream().allMatch(ids -> ids.firstArrivalAfter(nodeThawedAt).isPresent()));

                int leader = cluster.streamLeader();
                int cursorLeader = cluster.consumerLeader(cursor);
                long frozenAt = System.nanoTime();
                long leaderBackAt;
                try (Freeze frozen = Freeze.of(cluster.nats().pid(leader))) {
                    leaderBackAt = DeliveryCheck.awaitNewLeader(cluster, leader, WAIT);
                    holdUntil(frozenAt);
                }
                report("SIGSTOP of the stream leader's server", load, received, frozenAt, leaderBackAt);
                LOG.warn("SIGSTOP of the stream leader's server n{} (the push cursor's leader: n{}): push's first"
                        + " event after the new leader {} ms", leader, cursorLeader,
                        target.firstArrivalAfter(leaderBackAt).map(Duration::toMillis).orElse(-1L));

                load.stop();
                load.awaitDone(WAIT);
                // The woken server rejoins before the stream is read back through any of them.
                cluster.nats().awaitJetStream(WAIT);
                // The publish node 1 held through its freeze returns only after SIGCONT.
                LOG.warn("SIGSTOP of node 1: the longest publish, all returned, {} ms",
                        load.longestPublishBetween(nodeFrozenAt, nodeThawedAt).toMillis());
                assertEquals(List.of(), load.failures(), "publishes that failed despite the other nodes");
                DeliveryCheck.everyAcknowledgedOnceInOrder(cluster, received, load.acknowledged(), WAIT);
                Set<String> inFlight = new HashSet<>(target.inFlightAround(nodeFrozenAt, IN_FLIGHT));
                inFlight.addAll(target.inFlightAround(frozenAt, IN_FLIGHT));
                DeliveryCheck.everyAcknowledgedPushedInOrder(cluster, target, received.get(0), load.acknowledged(),
                        inFlight, nodeFrozenAt, WAIT);
                // Last, so that a late resume still shows whether anything was refused, lost or reordered.
                DeliveryCheck.resumedWithin(cluster, received, leaderBackAt, "after the frozen leader was replaced",
                        WAIT);
                DeliveryCheck.resumedWithin(cluster, List.of(received.get(1)), nodeThawedAt,
                        "after node 1's SIGCONT", WAIT);
                if (cursorLeader != leader) {
                    // Else the cursor needs a leader of its own first: ClusterConsumerRecoveryIT measures that. An
                    // event handed out as the server froze may have been lost on its way (its pull went through
                    // that server): the cursor gives it out again after its acknowledgement wait.
                    DeliveryCheck.pushResumedWithin(cluster, target, leaderBackAt,
                            DeliveryCheck.RESUMED_WITHIN.plus(DeliveryCheck.DEFAULT_ACK_WAIT),
                            "after the frozen leader was replaced", WAIT);
                }
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

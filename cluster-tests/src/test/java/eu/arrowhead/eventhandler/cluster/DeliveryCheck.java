package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import java.time.Duration;
import java.util.List;

/**
 * What the fault tests assert: each acknowledged event reached each subscriber once, in order, and delivery
 * resumed soon after the stream had a leader again.
 */
final class DeliveryCheck {
    /** cluster.timeout-seconds (its default, 5 s) + 2 s: how soon SSE delivery resumes once a leader is back. */
    static final Duration RESUMED_WITHIN = Duration.ofSeconds(7);

    private DeliveryCheck() {
    }

    /**
     * Waits until every subscriber has every acknowledged event, then asserts none was lost, duplicated or out
     * of order for any of them, no replay gap was announced, and the stream holds them all.
     */
    static void everyAcknowledgedOnceInOrder(ProcessCluster cluster, List<ReceivedIds> received,
                                             List<Long> acknowledged, Duration wait) throws Exception {
        for (ReceivedIds ids : received) {
            Await.until("a subscriber to receive every acknowledged event", wait, () -> ids.hasAll(acknowledged));
        }
        for (int i = 0; i < received.size(); i++) {
            ReceivedIds ids = received.get(i);
            assertEquals(List.of(), ids.missing(acknowledged), "lost by subscriber " + i);
            assertEquals(0, ids.duplicates(), "duplicated to subscriber " + i);
            assertTrue(ids.increasing(), "out of order for subscriber " + i);
            assertEquals(0, ids.gaps(), "replay gaps for subscriber " + i);
        }
        assertEquals(List.of(), cluster.notInStream(acknowledged), "acknowledged but not in the stream");
    }

    /**
     * Waits until the servers other than {@code formerLeader} name another leader of the stream.
     *
     * @return when they did ({@link System#nanoTime})
     */
    static long awaitNewLeader(ProcessCluster cluster, int formerLeader, Duration wait) throws InterruptedException {
        Await.until("another server to lead the stream", wait, () -> {
            int leader = cluster.streamLeaderAskingAllBut(formerLeader);
            return leader >= 0 && leader != formerLeader;
        });
        return System.nanoTime();
    }

    /**
     * Every subscriber got an event within {@link #RESUMED_WITHIN} after {@code sinceNanos}; a failure's message
     * holds what the nodes logged of the cluster, to tell which step was late.
     */
    static void resumedWithin(ProcessCluster cluster, List<ReceivedIds> received, long sinceNanos, String when,
                              Duration wait) throws InterruptedException {
        for (ReceivedIds ids : received) {
            Await.until("a subscriber to receive an event " + when, wait,
                    () -> ids.firstArrivalAfter(sinceNanos).isPresent());
            Duration resumed = ids.firstArrivalAfter(sinceNanos).orElseThrow();
            assertTrue(resumed.compareTo(RESUMED_WITHIN) <= 0, () -> "SSE resumed " + resumed.toMillis() + " ms "
                    + when + " (" + ids.connections() + " connections); the nodes logged:\n" + cluster.clusterLog());
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What the fault tests assert: each acknowledged event reached each subscriber once, in order, and delivery
 * resumed soon after the stream had a leader again.
 */
final class DeliveryCheck {
    /** cluster.timeout-seconds (its default, 5 s) + 2 s: how soon SSE delivery resumes once a leader is back. */
    static final Duration RESUMED_WITHIN = Duration.ofSeconds(7);
    /** A push cursor's acknowledgement wait with the push settings' defaults. */
    static final Duration DEFAULT_ACK_WAIT = Duration.ofSeconds(20);

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
     * Waits until the push subscriber has every acknowledged event, then asserts it had them in the stream's order
     * (their first copies, by the ids {@code reference}, an SSE subscriber that had them all, saw), and none twice
     * but the events in {@code mayRepeat} (those in flight at a fault: at least once), each at most twice. A failure
     * shows the arrivals around the events pushed twice, timed from {@code faultAt}, and what the nodes logged.
     */
    static void everyAcknowledgedPushedInOrder(ProcessCluster cluster, PushTarget target, ReceivedIds reference,
                                               List<Long> acknowledged, Set<String> mayRepeat, long faultAt,
                                               Duration wait) throws InterruptedException {
        Map<String, Long> idOf = reference.idsByPayload();
        Set<Long> wanted = new HashSet<>(acknowledged);
        Await.until("the push subscriber to receive every acknowledged event", wait, () -> target.payloads().stream()
                .map(idOf::get).filter(Objects::nonNull).collect(Collectors.toSet()).containsAll(wanted));
        List<String> pushed = target.payloads();
        List<Long> firstCopies = pushed.stream().distinct().map(idOf::get).filter(Objects::nonNull).toList();
        for (int i = 1; i < firstCopies.size(); i++) {
            assertTrue(firstCopies.get(i) > firstCopies.get(i - 1), "pushed out of order: " + firstCopies.get(i)
                    + " after " + firstCopies.get(i - 1));
        }
        Map<String, Integer> copies = new HashMap<>();
        pushed.forEach(payload -> copies.merge(payload, 1, Integer::sum));
        Set<String> twice = new TreeSet<>();
        copies.forEach((payload, count) -> {
            assertTrue(count <= 2, payload + " pushed " + count + " times");
            if (count == 2) {
                twice.add(payload);
            }
        });
        twice.removeAll(mayRepeat);
        assertTrue(twice.isEmpty(), () -> "pushed twice, not in flight at a fault (in flight: " + mayRepeat + "): "
                + twice + "; the arrivals from the first fault: " + target.arrivalsAround(twice, faultAt)
                + "; the nodes logged:\n" + cluster.clusterLog());
    }

    /**
     * The push subscriber got an event within {@code bound} after {@code sinceNanos}; a failure's message holds
     * what the nodes logged of the cluster.
     */
    static void pushResumedWithin(ProcessCluster cluster, PushTarget target, long sinceNanos, Duration bound,
                                  String when, Duration wait) throws InterruptedException {
        Await.until("the push subscriber to receive an event " + when, wait,
                () -> target.firstArrivalAfter(sinceNanos).isPresent());
        Duration resumed = target.firstArrivalAfter(sinceNanos).orElseThrow();
        assertTrue(resumed.compareTo(bound) <= 0, () -> "push resumed " + resumed.toMillis() + " ms " + when
                + "; the nodes logged:\n" + cluster.clusterLog());
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

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

/**
 * Three NATS servers (the stream with 3 replicas) and three Event Handler nodes: publishers on every node,
 * subscribers on every node, 10 000 events. Every subscriber gets every event once, and all of them in the same
 * order.
 */
class ClusterDeliveryIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int PUBLISHERS = 4;
    private static final int EVENTS_EACH = 2500;

    @TempDir
    Path directory;

    @Test
    void tenThousandEventsFromEveryNodeReachEverySubscriberOnceInOneOrder() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(directory, 3)) {
            List<ReceivedIds> received = new ArrayList<>();
            List<EventSubscriber> subscribers = new ArrayList<>();
            try (PublishLoad load = new PublishLoad(PUBLISHERS, EVENTS_EACH, "cluster.delivery",
                    p -> List.of(cluster.urisFrom(p % 3).get(0)), PUBLISHERS * EVENTS_EACH)) {
                for (int i = 0; i < 6; i++) {
                    ReceivedIds ids = new ReceivedIds();
                    received.add(ids);
                    subscribers.add(EventSubscriber.builder(cluster.urisFrom(i % 3).get(0))
                            .eventTypes("cluster.delivery").listener(ids).subscriptionListener(ids).subscribe());
                }
                Await.until("every subscriber to be connected", WAIT,
                        () -> received.stream().allMatch(ids -> ids.connections() > 0));
                load.start();
                load.awaitDone(WAIT);
                assertEquals(List.of(), load.failures());
                List<Long> acknowledged = load.acknowledged();
                assertEquals(PUBLISHERS * EVENTS_EACH, acknowledged.size());
                for (ReceivedIds ids : received) {
                    Await.until("a subscriber to receive all 10 000 events", WAIT, () -> ids.hasAll(acknowledged));
                }
                List<Long> order = received.get(0).ids();
                for (int i = 0; i < received.size(); i++) {
                    ReceivedIds ids = received.get(i);
                    assertEquals(0, ids.duplicates(), "duplicated to subscriber " + i);
                    assertTrue(ids.increasing(), "out of order for subscriber " + i);
                    assertEquals(order, ids.ids(), "subscriber " + i + " saw another order");
                    assertEquals(1, ids.connections(), "subscriber " + i + " had to reconnect");
                }
            } finally {
                subscribers.forEach(EventSubscriber::close);
            }
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.push.StandInSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A push cursor's leader answers an acknowledgement before its followers have it: should it die then, the next
 * leader holds the event as in flight and sends it again after the acknowledgement wait, to a subscriber that had
 * it. So when a node sees the cursor's leader move, it acknowledges again the last event it acknowledged. Shown
 * here on the NATS subjects themselves: the acknowledgement of the one event pushed goes out again after the
 * cursor's leader steps down, and the subscriber has the event once.
 */
class PushCursorLeaderMoveTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String STREAM = "EVENTHANDLER";

    @TempDir
    Path directory;

    @Test
    void aNodeAcknowledgesItsLastEventAgainWhenTheCursorsLeaderMoves() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 3);
             TestServer node = TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                     "cluster.replicas", "3");
             StandInSubscriber subscriber = StandInSubscriber.healthy();
             Connection watcher = Nats.connect(nats.urls())) {
            Reply subscribed = node.post("/eventhandler/subscribe", subscriber.subscription("led", "c.led", ""));
            assertEquals(200, subscribed.statusCode(), subscribed.body());
            JetStreamManagement management = watcher.jetStreamManagement();
            String cursor = management.getConsumerNames(STREAM).stream()
                    .filter(name -> name.startsWith("eventhandler-push-")).findFirst().orElseThrow();
            List<String> acks = new CopyOnWriteArrayList<>();
            AtomicInteger looks = new AtomicInteger();
            Dispatcher seen = watcher.createDispatcher();
            seen.subscribe("$JS.ACK." + STREAM + "." + cursor + ".>", message -> acks.add(message.getSubject()));
            seen.subscribe("$JS.API.CONSUMER.INFO." + STREAM + "." + cursor, message -> looks.incrementAndGet());
            watcher.flush(WAIT);

            Reply published = node.post("/eventhandler/publish", "{\"eventType\":\"c.led\",\"payload\":\"once\"}");
            assertEquals(200, published.statusCode(), published.body());
            subscriber.awaitEvents(1);
            Await.until("the event to be acknowledged", WAIT, () -> !acks.isEmpty());
            String ack = acks.get(0);
            // The node's watch knows the cursor's leader from a look after the acknowledgement.
            int looked = looks.get();
            Await.until("the node to look at the cursor", WAIT, () -> looks.get() > looked);

            String leader = leaderOf(management, cursor);
            int sent = Collections.frequency(acks, ack); // more than once if an answer came late
            watcher.request("$JS.API.CONSUMER.LEADER.STEPDOWN." + STREAM + "." + cursor, new byte[0], WAIT);
            Await.until("the cursor to have another leader", WAIT, () -> {
                String now = leaderOf(management, cursor);
                return now != null && !now.equals(leader);
            });

            Await.until("the acknowledgement to be sent again", WAIT, () -> Collections.frequency(acks, ack) > sent);
            assertEquals(List.of("once"), subscriber.payloads());
        }
    }

    /** The server that leads {@code cursor}, or {@code null} while none answers. */
    private static String leaderOf(JetStreamManagement management, String cursor) {
        try {
            return management.getConsumerInfo(STREAM, cursor).getClusterInfo().getLeader();
        } catch (IOException | JetStreamApiException e) {
            return null;
        }
    }
}

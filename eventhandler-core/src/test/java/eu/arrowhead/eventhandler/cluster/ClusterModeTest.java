package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.push.StandInSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode in one JVM: three Event Handler nodes on three clustered nats-server processes (the stream with 3
 * replicas). Every node delivers every event in one order, resumes on another node are exact, and a keyed repeat
 * on another node publishes nothing.
 */
class ClusterModeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path directory;
    private static NatsCluster nats;
    private static final TestServer[] nodes = new TestServer[3];

    @BeforeAll
    static void start() throws Exception {
        nats = NatsCluster.start(directory, 3);
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                    "cluster.replicas", "3", "cluster.node-name", "node-" + i, "replay.window-events", "20");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        TestServer.closeAll(nodes);
        TestServer.closeAll(nats);
    }

    private static String event(String type, String payload) {
        return "{\"eventType\":\"" + type + "\",\"payload\":\"" + payload + "\"}";
    }

    private static long publish(int node, String type, String payload) throws Exception {
        Reply reply = nodes[node].post("/eventhandler/publish", event(type, payload));
        assertEquals(200, reply.statusCode(), reply.body());
        return JSON.readTree(reply.body()).get("id").asLong();
    }

    private static Reply keyed(int node, String path, String body, String key) {
        return nodes[node].postKeyed(path, body, key);
    }

    @Test
    void everyNodeDeliversEveryEventInTheSameOrder() throws Exception {
        List<SseStream> streams = new ArrayList<>();
        try {
            for (TestServer node : nodes) {
                streams.add(node.subscribe("?eventType=c.order"));
            }
            List<Long> published = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                published.add(publish(i % 3, "c.order", "e" + i));
            }
            for (int i = 1; i < published.size(); i++) {
                assertTrue(published.get(i) > published.get(i - 1), "ids increase: " + published);
            }
            for (SseStream stream : streams) {
                List<Long> received = new ArrayList<>();
                for (Frame frame : stream.events(300, WAIT)) {
                    received.add(Long.parseLong(frame.id()));
                }
                assertEquals(published, received);
            }
        } finally {
            streams.forEach(SseStream::close);
        }
    }

    @Test
    void aResumeOnAnotherNodeContinuesExactlyFromTheStream() throws Exception {
        List<Long> published = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            published.add(publish(0, "c.resume", "e" + i));
        }
        // Older than node 2's replay window (20 events): read back from the stream, then the window, then live.
        try (SseStream stream = resume(2, "?eventType=c.resume", published.get(9))) {
            long live = publish(1, "c.resume", "live");
            List<Long> received = new ArrayList<>();
            for (Frame frame : stream.events(91, WAIT)) {
                received.add(Long.parseLong(frame.id()));
            }
            List<Long> expected = new ArrayList<>(published.subList(10, 100));
            expected.add(live);
            assertEquals(expected, received);
        }
    }

    @Test
    void aKeyedRepeatOnAnotherNodeGetsTheSameIdAndIsDeliveredOnce() throws Exception {
        try (SseStream stream = nodes[1].subscribe("?eventType=c.idem")) {
            String body = event("c.idem", "once");
            Reply first = keyed(0, "/eventhandler/publish", body, "cluster-key-1");
            Reply repeat = keyed(2, "/eventhandler/publish", body, "cluster-key-1");
            assertEquals(200, first.statusCode(), first.body());
            assertEquals(first.body(), repeat.body());
            Reply other = keyed(1, "/eventhandler/publish", event("c.idem", "another"), "cluster-key-1");
            assertEquals(422, other.statusCode(), other.body());

            String batch = "[" + event("c.idem", "b0") + "," + event("c.idem", "b1") + "]";
            Reply batchFirst = keyed(1, "/eventhandler/publish/batch", batch, "cluster-key-2");
            Reply batchRepeat = keyed(0, "/eventhandler/publish/batch", batch, "cluster-key-2");
            assertEquals(200, batchFirst.statusCode(), batchFirst.body());
            assertEquals(batchFirst.body(), batchRepeat.body());

            long marker = publish(2, "c.idem", "marker");
            JsonNode ids = JSON.readTree(batchFirst.body()).get("ids");
            List<String> expected = List.of(Long.toString(JSON.readTree(first.body()).get("id").asLong()),
                    ids.get(0).asText(), ids.get(1).asText(), Long.toString(marker));
            List<String> received = new ArrayList<>();
            for (Frame frame : stream.events(4, WAIT)) {
                received.add(frame.id());
            }
            assertEquals(expected, received, "a repeat was delivered again");
        }
    }

    @Test
    void aStreamCreatedForAMigratedLogStartsAtTheFirstIdGiven() throws Exception {
        try (TestServer migrated = TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                "cluster.stream", "MIGRATED", "cluster.subject-prefix", "migrated.events", "cluster.first-id", "5000")) {
            Reply reply = migrated.post("/eventhandler/publish", event("c.migrated", "first"));
            assertEquals(200, reply.statusCode(), reply.body());
            assertEquals(5000, JSON.readTree(reply.body()).get("id").asLong());
        }
    }

    /**
     * The stream keeps its duplicate window, not the node: a keyed repeat sent to the node that took the first
     * publish, after that node was restarted, gets the first ids and stores nothing (the next event takes the next
     * sequence); another request under the key is still a 422.
     */
    @Test
    void aKeyedRepeatAfterTheNodeThatTookItRestartedGetsTheFirstIds() throws Exception {
        String[] settings = {"cluster.enabled", "true", "cluster.nats-urls", nats.urls(), "cluster.stream",
                "RESTARTED", "cluster.subject-prefix", "restarted.events", "cluster.node-name", "restarted"};
        String body = event("c.restarted", "once");
        Reply first;
        try (TestServer node = TestServer.start(settings)) {
            first = node.postKeyed("/eventhandler/publish", body, "restart-key");
            assertEquals(200, first.statusCode(), first.body());
        }
        try (TestServer node = TestServer.start(settings)) {
            Reply repeat = node.postKeyed("/eventhandler/publish", body, "restart-key");
            assertEquals(200, repeat.statusCode(), repeat.body());
            assertEquals(first.body(), repeat.body());
            Reply other = node.postKeyed("/eventhandler/publish", event("c.restarted", "another"), "restart-key");
            assertEquals(422, other.statusCode(), other.body());
            Reply next = node.post("/eventhandler/publish", event("c.restarted", "next"));
            assertEquals(JSON.readTree(first.body()).get("id").asLong() + 1,
                    JSON.readTree(next.body()).get("id").asLong(), "the repeat was stored again: " + next.body());
        }
    }

    @Test
    void aPushSubscriptionIsSharedByEveryNodeAndDeliveredOnceInOrder() throws Exception {
        try (StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            Reply subscribed = nodes[0].post("/eventhandler/subscribe",
                    subscriber.subscription("pushed", "c.push", ""));
            assertEquals(200, subscribed.statusCode(), subscribed.body());
            for (TestServer node : nodes) {
                Await.until("every node to know the subscription", WAIT,
                        () -> subscriptionCount(node) == 1);
            }
            List<String> published = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                publish(i % 3, "c.push", "p" + i);
                published.add("p" + i);
            }
            subscriber.awaitEvents(60);
            assertEquals(published, subscriber.payloads());

            Reply deleted = nodes[2].send(new HttpDelete(nodes[2].uri(
                    "/eventhandler/unsubscribe?event_type=c.push&system_name=pushed")));
            assertEquals(200, deleted.statusCode(), deleted.body());
            for (TestServer node : nodes) {
                Await.until("every node to forget the subscription", WAIT, () -> subscriptionCount(node) == 0);
            }
        }
    }

    private static int subscriptionCount(TestServer node) {
        try {
            return JSON.readTree(node.get("/eventhandler/mgmt/subscriptions").body()).get("count").asInt();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * A node whose subscribers want one event type reads only that type from the stream (its health says so) and
     * holds no topic of the others. A subscriber to another type widens what it reads at once, its resume from
     * before served from the stream; both subscribers get every event of theirs, in order, while the node switches,
     * and once the second leaves the node reads the one type again.
     */
    @Test
    void aNodeReadsOnlyTheEventTypeItsSubscribersWant() throws Exception {
        try (SseStream narrow = nodes[1].subscribe("?eventType=c.narrow")) {
            Await.until("node 1 reads only c.narrow", WAIT, () -> "c.narrow".equals(reads(1)));
            List<Long> narrowIds = new ArrayList<>();
            List<Long> otherIds = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                otherIds.add(publish(0, "c.other", "o" + i));
                if (i % 10 == 9) {
                    narrowIds.add(publish(2, "c.narrow", "n" + i));
                }
            }
            assertEquals(narrowIds, ids(narrow.events(4, WAIT)));
            String topics = nodes[1].get("/eventhandler/mgmt/topics").body();
            assertFalse(topics.contains("c.other"), "node 1 read no event of c.other: " + topics);

            try (SseStream other = resume(1, "?eventType=c.other", otherIds.get(0) - 1)) {
                for (int i = 40; i < 60; i++) {
                    otherIds.add(publish(0, "c.other", "o" + i));
                    narrowIds.add(publish(2, "c.narrow", "n" + i));
                }
                assertEquals(otherIds, ids(other.events(60, WAIT)));
                assertEquals(narrowIds.subList(4, 24), ids(narrow.events(20, WAIT)));
                assertEquals("all", reads(1));
            }
            Await.until("node 1 reads only c.narrow again", WAIT, () -> "c.narrow".equals(reads(1)));
            long last = publish(0, "c.narrow", "after");
            assertEquals(List.of(last), ids(narrow.events(1, WAIT)));
        }
    }

    /**
     * Events published one after the other while the node's subscriber makes it read every type (it read another
     * one) and then, once that subscriber has been alone for a while, only that subscriber's type: every one
     * arrives once, in order, on the node that took the publishes.
     */
    @Test
    void aSubscriberLosesNothingWhileItsNodeWidensAndNarrowsWhatItReads() throws Exception {
        try (SseStream idle = nodes[0].subscribe("?eventType=c.switch-idle")) {
            Await.until("node 0 reads only c.switch-idle", WAIT, () -> "c.switch-idle".equals(reads(0)));
        }
        try (SseStream stream = nodes[0].subscribe("?eventType=c.switch")) {
            // The node widens its feed on its own thread, at once but after the subscription is answered.
            Await.until("node 0 to read every type: c.switch-idle and c.switch are more than one subject", WAIT,
                    () -> "all".equals(reads(0)));
            List<Long> published = new ArrayList<>();
            long began = System.nanoTime();
            while (!"c.switch".equals(reads(0)) || published.size() < 200) {
                published.add(publish(0, "c.switch", "s" + published.size()));
                assertTrue(System.nanoTime() - began < WAIT.toNanos(), "node 0 never read only c.switch");
            }
            assertEquals(published, ids(stream.events(published.size(), WAIT)));
        }
    }

    /** What node {@code node} reads from the stream, as its health says. */
    private static String reads(int node) {
        String health = nodes[node].get("/eventhandler/mgmt/health").body();
        try {
            return JSON.readTree(health).get("cluster").get("reads").asText();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Long> ids(List<Frame> frames) {
        return frames.stream().map(frame -> Long.parseLong(frame.id())).toList();
    }

    /**
     * Resumes as the subscriber library does: a node whose feed has not yet reached the resume point says to try
     * again in a moment, and is asked again.
     */
    private static SseStream resume(int node, String query, long lastEventId) throws InterruptedException {
        AtomicReference<SseStream> opened = new AtomicReference<>();
        Await.until("node " + node + " serves a resume from " + lastEventId, WAIT, () -> {
            try {
                opened.set(nodes[node].subscribe(query, "Last-Event-ID", Long.toString(lastEventId)));
                return true;
            } catch (SseStream.RefusedException e) {
                if (!e.getMessage().contains("try again")) {
                    throw e;
                }
                return false;
            }
        });
        return opened.get();
    }

    @Test
    void healthShowsTheNodesViewOfTheCluster() throws Exception {
        publish(0, "c.health", "x");
        Reply health = nodes[1].get("/eventhandler/mgmt/health");
        assertEquals(200, health.statusCode(), health.body());
        JsonNode cluster = JSON.readTree(health.body()).get("cluster");
        assertEquals("node-1", cluster.get("node").asText());
        assertEquals("UP", cluster.get("status").asText());
        assertEquals(2, cluster.get("replicas").size(), health.body());
        assertTrue(cluster.get("streamLastId").asLong() >= 1, health.body());
    }
}

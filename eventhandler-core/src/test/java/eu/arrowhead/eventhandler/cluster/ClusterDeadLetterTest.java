package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.push.StandInSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.Nats;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.StorageType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Dead letters in cluster mode, two Event Handler nodes on a nats-server: a push subscriber that refuses one event
 * for good gets every other event in order, and the refused one is on the list every node sees, across a node's
 * restart; any node redelivers it (kept, with the new answer, while the subscriber still refuses it; gone once it
 * takes it) and drops it; the list keeps push.dead-letter-max; a deleted subscription's letters go with it; a
 * subscriber that refuses everything is paused on every node until resumed.
 */
class ClusterDeadLetterTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String LETTERS = "/eventhandler/mgmt/subscriptions/1/dead-letters";
    @TempDir
    static Path directory;
    private static NatsCluster nats;
    private final TestServer[] nodes = new TestServer[2];
    private String[][] settings;

    @BeforeAll
    static void startNats() throws Exception {
        nats = NatsCluster.start(directory, 1);
    }

    @AfterAll
    static void stopNats() throws Exception {
        TestServer.closeAll(nats);
    }

    /** Two nodes on a stream of the test's own, with its first subscription's id 1. */
    private void startNodes(String stream, String... more) {
        settings = new String[nodes.length][];
        for (int i = 0; i < nodes.length; i++) {
            List<String> keyValues = new ArrayList<>(List.of("cluster.enabled", "true", "cluster.nats-urls",
                    nats.urls(), "cluster.stream", stream, "cluster.subject-prefix", stream.toLowerCase() + ".events",
                    "cluster.node-name", stream + "-" + i, "push.retry-initial-millis", "20",
                    "push.retry-max-millis", "100", "push.poison-retries", "1"));
            keyValues.addAll(List.of(more));
            settings[i] = keyValues.toArray(String[]::new);
            nodes[i] = TestServer.start(settings[i]);
        }
    }

    @AfterEach
    void stopNodes() {
        TestServer.closeAll(nodes);
    }

    private void subscribe(StandInSubscriber subscriber) throws InterruptedException {
        subscribe(subscriber, "");
    }

    private void subscribe(StandInSubscriber subscriber, String extraFields) throws InterruptedException {
        Reply subscribed = nodes[0].post("/eventhandler/subscribe",
                subscriber.subscription("consumer", "c.dl", extraFields));
        assertEquals(200, subscribed.statusCode(), subscribed.body());
        for (TestServer node : nodes) {
            Await.until("every node to know subscription 1", WAIT,
                    () -> node.get("/eventhandler/mgmt/subscriptions/1").statusCode() == 200);
        }
    }

    private static JsonNode letters(TestServer node) {
        Reply reply = node.get(LETTERS);
        assertEquals(200, reply.statusCode(), reply.body());
        return StandInSubscriber.read(reply.body());
    }

    private static int count(TestServer node) {
        return letters(node).get("count").asInt();
    }

    private static List<Long> listedIds(TestServer node) {
        List<Long> ids = new ArrayList<>();
        letters(node).get("data").forEach(letter -> ids.add(letter.get("eventId").asLong()));
        return ids;
    }

    private static JsonNode redeliver(TestServer node, String query) {
        Reply reply = node.post(LETTERS + "/redeliver" + query, "");
        assertEquals(200, reply.statusCode(), reply.body());
        return StandInSubscriber.read(reply.body());
    }

    /** What SharedDeadLetters logs from now on, at this level (or its own: null) and above. */
    private static ListAppender<ILoggingEvent> listen(Level level) {
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        letterLog().setLevel(level);
        letterLog().addAppender(lines);
        return lines;
    }

    private static void stopListening(ListAppender<ILoggingEvent> lines) {
        letterLog().detachAppender(lines);
        letterLog().setLevel(null);
    }

    private static ch.qos.logback.classic.Logger letterLog() {
        return (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(SharedDeadLetters.class);
    }

    private double counted(String series) {
        double sum = 0;
        for (TestServer node : nodes) {
            sum += node.counted(series);
        }
        return sum;
    }

    @Test
    void aRefusedEventIsSetAsideSharedRedeliveredAndDroppedOnAnyNode() throws Exception {
        ListAppender<ILoggingEvent> lines = listen(null);
        AtomicInteger refusal = new AtomicInteger(400);
        startNodes("DLMAIN");
        try (StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                payload -> payload.startsWith("poison") ? refusal.get() : 200)) {
            subscribe(subscriber);
            List<String> expected = new ArrayList<>();
            long poison = 0;
            for (int i = 0; i < 10; i++) {
                String payload = i == 3 ? "poison" : "e" + i;
                long id = nodes[i % 2].publish("c.dl", payload);
                if (i == 3) {
                    poison = id;
                } else {
                    expected.add(payload);
                }
            }
            subscriber.awaitEvents(9);
            assertEquals(expected, subscriber.payloads(), "every other event, in order");
            Await.until("the letter is listed on the other node", WAIT, () -> count(nodes[1]) == 1);
            JsonNode letter = letters(nodes[1]).get("data").get(0);
            assertEquals(poison, letter.get("eventId").asLong());
            assertEquals("c.dl", letter.get("eventType").asText());
            assertEquals(400, letter.get("status").asInt());
            assertEquals("refused with 400", letter.get("answer").asText());
            // Counted and said after the letter is written, which another node may list first.
            Await.until("the letter is counted", WAIT,
                    () -> counted("eventhandler_push_dead_letters_total{subscription=\"1\"}") >= 1);
            assertEquals(1, counted("eventhandler_push_dead_letters_total{subscription=\"1\"}"));
            assertEquals(1, lines.list.stream().filter(line -> line.getFormattedMessage().contains("set aside"))
                    .count(), "said once, not per try");

            nodes[0].close();
            nodes[0] = TestServer.start(settings[0]);
            assertEquals(List.of(poison), listedIds(nodes[0]), "kept across the node's restart");

            // Still refused, now with another status: the letter stays, with the new answer.
            refusal.set(422);
            int before = subscriber.requests();
            JsonNode refused = redeliver(nodes[0], "?eventId=" + poison);
            assertEquals(List.of(poison), ids(refused.get("redelivered")));
            Await.until("the letter to hold the new answer", WAIT,
                    () -> letters(nodes[1]).get("data").get(0).get("status").asInt() == 422);
            assertEquals(before + 1, subscriber.requests(), "redelivered once");

            refusal.set(200);
            JsonNode redelivery = redeliver(nodes[1], "");
            assertEquals(List.of(poison), ids(redelivery.get("redelivered")));
            assertEquals(0, redelivery.get("notInLog").size());
            subscriber.awaitEvents(10);
            assertEquals("poison", subscriber.payloads().get(9));
            Await.until("a letter its subscriber took leaves the list", WAIT, () -> count(nodes[0]) == 0);
            nodes[0].publish("c.dl", "after");
            subscriber.awaitEvents(11);
            assertEquals("after", subscriber.payloads().get(10), "the cursor goes on where it was");

            refusal.set(400);
            long second = nodes[1].publish("c.dl", "poison again");
            Await.until("the second letter is listed", WAIT, () -> count(nodes[0]) == 1);
            Reply dropped = nodes[0].send(new HttpDelete(nodes[0].uri(LETTERS + "?eventId=" + second)));
            assertEquals(200, dropped.statusCode(), dropped.body());
            assertEquals(0, count(nodes[1]));
            Reply again = nodes[1].send(new HttpDelete(nodes[1].uri(LETTERS + "?eventId=" + second)));
            assertEquals(404, again.statusCode(), again.body());
            nodes[1].publish("c.dl", "last");
            subscriber.awaitEvents(12);
            assertEquals("last", subscriber.payloads().get(11));
        } finally {
            stopListening(lines);
        }
    }

    @Test
    void theListKeepsTheNewestLettersAndGoesWithItsSubscription() throws Exception {
        startNodes("DLBOUND", "push.dead-letter-max", "2", "push.pause-after-dead-letters", "0");
        try (StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                payload -> payload.startsWith("poison") ? 400 : 200)) {
            subscribe(subscriber);
            List<Long> poisoned = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                poisoned.add(nodes[i % 2].publish("c.dl", "poison" + i));
            }
            nodes[0].publish("c.dl", "taken");
            subscriber.awaitEvents(1);
            Await.until("the dropped letter is counted", WAIT,
                    () -> counted("eventhandler_push_dead_letters_dropped_total{subscription=\"1\"}") == 1);
            assertEquals(poisoned.subList(1, 3), listedIds(nodes[1]), "the oldest was dropped");
            assertEquals(3, counted("eventhandler_push_dead_letters_total{subscription=\"1\"}"));

            Reply deleted = nodes[1].send(new HttpDelete(nodes[1].uri(
                    "/eventhandler/unsubscribe?event_type=c.dl&system_name=consumer")));
            assertEquals(200, deleted.statusCode(), deleted.body());
            try (Connection connection = Nats.connect(nats.url(0))) {
                KeyValue bucket = connection.keyValue("DLBOUND_DEAD_LETTERS");
                Await.until("the deleted subscription's letters to go", WAIT, () -> keys(bucket).isEmpty());
            }
        }
    }

    /**
     * A subscriber that refuses everything it is sent (its filter passes) is paused on every node after
     * push.pause-after-dead-letters in a row (events of the type it filters out do not break the row), stays
     * paused across a node's restart, is sent nothing while paused, and gets the events held meanwhile once a sysop
     * resumes it on any node.
     */
    @Test
    void aSubscriberThatRefusesEverythingIsPausedOnEveryNodeUntilResumed() throws Exception {
        startNodes("DLPAUSE", "push.poison-retries", "0", "push.pause-after-dead-letters", "3");
        try (StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                payload -> payload.startsWith("poison") ? 400 : 200)) {
            subscribe(subscriber, "\"filterMetaData\":{\"unit\":\"celsius\"},\"matchMetaData\":true");
            for (int i = 0; i < 3; i++) {
                publishCelsius(nodes[i % 2], "poison" + i);
                if (i < 2) {
                    // Of its type, but not for this subscriber: not sent, so it does not break the row.
                    nodes[i % 2].publish("c.dl", "fahrenheit" + i);
                }
            }
            for (TestServer node : nodes) {
                Await.until("every node to show the pause", WAIT, () -> paused(node));
            }
            JsonNode subscription = StandInSubscriber.read(nodes[1].get("/eventhandler/mgmt/subscriptions/1").body());
            assertTrue(subscription.get("pausedReason").asText().contains("3 events in a row"),
                    subscription.toString());
            assertEquals(1, nodes[1].metric("eventhandler_push_paused_subscriptions"));

            nodes[0].close();
            nodes[0] = TestServer.start(settings[0]);
            assertTrue(paused(nodes[0]), "kept across the node's restart");
            try (StandInSubscriber witness = StandInSubscriber.healthy();
                 Connection connection = Nats.connect(nats.url(0))) {
                Reply subscribed = nodes[1].post("/eventhandler/subscribe",
                        witness.subscription("witness", "c.dl", ""));
                assertEquals(200, subscribed.statusCode(), subscribed.body());
                publishCelsius(nodes[0], "held");
                publishCelsius(nodes[1], "held too");
                // An absence, witnessed: the same events reached another subscriber, and the paused one's cursor
                // still holds both, not taken.
                witness.awaitEvents(2);
                JetStreamManagement jsm = connection.jetStreamManagement();
                Await.until("the paused cursor to hold the two events", WAIT, () -> held(jsm) == 2);
            }
            assertEquals(3, subscriber.requests(), "nothing sent while paused");

            Reply resumed = nodes[0].post("/eventhandler/mgmt/subscriptions/1/resume", "");
            assertEquals(200, resumed.statusCode(), resumed.body());
            assertFalse(StandInSubscriber.read(resumed.body()).has("paused"), resumed.body());
            subscriber.awaitEvents(2);
            assertEquals(List.of("held", "held too"), subscriber.payloads());
            for (TestServer node : nodes) {
                Await.until("every node to show it resumed", WAIT, () -> !paused(node));
            }
            assertEquals(3, count(nodes[1]));
        }
    }

    /**
     * A subscription deleted while its subscriber's refusal is on its way leaves no letter and no pause behind (the
     * refusal's letter is not written), and a node's start removes what a deleted subscription left in the bucket.
     */
    @Test
    void aSubscriptionDeletedWhileALetterIsWrittenLeavesNoKeys() throws Exception {
        ListAppender<ILoggingEvent> lines = listen(Level.DEBUG);
        try (Connection connection = Nats.connect(nats.url(0))) {
            connection.keyValueManagement().create(KeyValueConfiguration.builder().name("DLGONE_DEAD_LETTERS")
                    .storageType(StorageType.File).maxHistoryPerKey(1).build());
            KeyValue bucket = connection.keyValue("DLGONE_DEAD_LETTERS");
            for (String key : List.of("99.5", "paused.99", "row-start.99")) {
                bucket.put(key, "left by deleted subscription 99".getBytes(StandardCharsets.UTF_8));
            }
            startNodes("DLGONE", "push.poison-retries", "0", "push.pause-after-dead-letters", "1");
            Await.until("a node's start to remove what a deleted subscription left", WAIT, () -> keys(bucket).isEmpty());

            List<Throwable> failures = new CopyOnWriteArrayList<>();
            try (StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(payload -> {
                try {
                    unsubscribeEverywhere();
                } catch (RuntimeException | AssertionError e) {
                    failures.add(e);
                }
                return 400;
            })) {
                subscribe(subscriber);
                nodes[0].publish("c.dl", "poison");
                Await.until("the refusal of a deleted subscription's event to reach its node", WAIT,
                        () -> lines.list.stream().anyMatch(line -> line.getFormattedMessage().contains("not listed")));
                assertEquals(List.of(), failures, "the subscription deleted during its POST");
                assertEquals(List.of(), keys(bucket), "no letter, no pause");
                assertEquals(0, counted("eventhandler_push_dead_letters_total{subscription=\"1\"}"));
            }
        } finally {
            stopListening(lines);
        }
    }

    /** Deletes subscription 1 and waits until no node has it (nor its cursor). */
    private void unsubscribeEverywhere() {
        Reply deleted = nodes[1].send(new HttpDelete(nodes[1].uri(
                "/eventhandler/unsubscribe?event_type=c.dl&system_name=consumer")));
        assertEquals(200, deleted.statusCode(), deleted.body());
        try {
            for (TestServer node : nodes) {
                // Unknown: 400 INVALID_PARAMETER, as Arrowhead 4.x answers.
                Await.until("no node to have subscription 1", WAIT,
                        () -> node.get("/eventhandler/mgmt/subscriptions/1").statusCode() == 400);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void publishCelsius(TestServer node, String payload) {
        Reply published = node.post("/eventhandler/publish", "{\"eventType\":\"c.dl\",\"payload\":\"" + payload
                + "\",\"metaData\":{\"unit\":\"celsius\"}}");
        assertEquals(200, published.statusCode(), published.body());
    }

    /** Events the paused subscription's cursor holds, not yet delivered or not yet acknowledged. */
    private static long held(JetStreamManagement jsm) {
        try {
            ConsumerInfo info = jsm.getConsumerInfo("DLPAUSE", "eventhandler-push-1");
            return info.getNumPending() + info.getNumAckPending();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean paused(TestServer node) {
        return StandInSubscriber.read(node.get("/eventhandler/mgmt/subscriptions/1").body()).path("paused")
                .asBoolean(false);
    }

    private static List<String> keys(KeyValue bucket) {
        try {
            return bucket.keys();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Long> ids(JsonNode array) {
        List<Long> ids = new ArrayList<>();
        array.forEach(id -> ids.add(id.asLong()));
        return ids;
    }
}

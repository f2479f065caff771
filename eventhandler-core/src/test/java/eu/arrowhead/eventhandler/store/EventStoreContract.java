package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.PageEnd;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.push.StandInSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TcpProxy;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The event store's behaviour, run against each real database by a subclass: the same suite for the
 * embedded H2 default and for MariaDB/MySQL.
 */
abstract class EventStoreContract {
    static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private TestDatabase database;

    abstract TestDatabase openDatabase();

    @BeforeEach
    void openTheDatabase() {
        database = openDatabase();
    }

    @AfterEach
    void closeTheDatabase() {
        database.close();
    }

    /** This test's database, open until the test ends. */
    TestDatabase database() {
        return database;
    }

    private TestServer start(String... keyValues) {
        return start(database.settings(), keyValues);
    }

    private static TestServer start(Map<String, String> store, String... keyValues) {
        Map<String, String> settings = new HashMap<>(store);
        settings.put("store.mode", "async");
        for (int i = 0; i < keyValues.length; i += 2) {
            settings.put(keyValues[i], keyValues[i + 1]);
        }
        List<String> flat = new ArrayList<>();
        settings.forEach((key, value) -> {
            flat.add(key);
            flat.add(value);
        });
        return TestServer.start(flat.toArray(String[]::new));
    }

    @Test
    void theSequenceContinuesAfterAGracefulRestart() throws Exception {
        try (TestServer server = start()) {
            for (int i = 1; i <= 10; i++) {
                assertEquals(i, server.publish("counter", "n" + i));
            }
        }
        try (TestServer server = start()) {
            assertEquals(11, server.publish("counter", "n11"));
            Await.until("11 events in the log", WAIT, () -> logged(server, "").size() == 11);
        }
    }

    /**
     * An {@code Idempotency-Key} is kept with its events: after a restart a repeat gets the first ids and publishes
     * nothing, another request under the key is a 422, and a key older than the window publishes anew.
     */
    @Test
    void aKeyedPublishIsAnsweredWithItsFirstIdsAfterARestart() throws Exception {
        String event = "{\"eventType\":\"keyed\",\"payload\":\"once\"}";
        String batch = "[{\"eventType\":\"keyed\",\"payload\":\"b0\"},{\"eventType\":\"keyed\",\"payload\":\"b1\"}]";
        Reply first;
        Reply firstBatch;
        try (TestServer server = start("store.mode", "sync")) {
            first = server.postKeyed("/eventhandler/publish", event, "restart-key");
            firstBatch = server.postKeyed("/eventhandler/publish/batch", batch, "restart-batch");
            assertEquals(200, first.statusCode(), first.body());
            assertEquals(200, firstBatch.statusCode(), firstBatch.body());
        }
        long stopped = System.currentTimeMillis();
        try (TestServer server = start("store.mode", "sync")) {
            assertEquals(first.body(), server.postKeyed("/eventhandler/publish", event, "restart-key").body());
            assertEquals(firstBatch.body(), server.postKeyed("/eventhandler/publish/batch", batch, "restart-batch")
                    .body());
            Reply other = server.postKeyed("/eventhandler/publish", event.replace("once", "other"), "restart-key");
            assertEquals(422, other.statusCode(), other.body());
            assertEquals(3, logged(server, "").size());
        }
        Await.until("the keys to be more than a second old", WAIT, () -> System.currentTimeMillis() - stopped > 1_000);
        try (TestServer server = start("store.mode", "sync", "publish.idempotency-window-seconds", "1")) {
            Reply anew = server.postKeyed("/eventhandler/publish", event, "restart-key");
            assertEquals(200, anew.statusCode(), anew.body());
            assertFalse(first.body().equals(anew.body()), "a key older than its window answered " + anew.body());
            assertEquals(4, logged(server, "").size());
            Map<String, String> store = database.settings();
            try (Connection connection = DriverManager.getConnection(EmbeddedH2.storeUrl(store.get("store.url")),
                    store.get("store.user"), store.get("store.password"))) {
                Await.until("every stored key to be deleted once older than the 1 s window", WAIT,
                        () -> storedKeys(connection) == 0);
            }
        }
    }

    private static long storedKeys(Connection connection) {
        try (Statement statement = connection.createStatement();
             ResultSet count = statement.executeQuery("SELECT COUNT(*) FROM eh_publish_key")) {
            count.next();
            return count.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void pushSubscriptionsSurviveARestartWithTheirIdsAndFields() throws Exception {
        String request = "{\"eventType\":\"Alarms\",\"subscriberSystem\":{\"systemName\":\"panel\","
                + "\"address\":\"127.0.0.1\",\"port\":9001},\"notifyUri\":\"/notify\",\"matchMetaData\":true,"
                + "\"filterMetaData\":{\"unit\":\"C\"},\"sources\":[{\"systemName\":\"sensor-1\"}],"
                + "\"startDate\":\"2026-01-01T00:00:00Z\",\"endDate\":\"2099-01-01T00:00:00Z\"}";
        String before;
        try (TestServer server = start()) {
            assertEquals(200, server.post("/eventhandler/subscribe", request).statusCode());
            assertEquals(200, server.post("/eventhandler/subscribe", request.replace("Alarms", "Other")).statusCode());
            assertEquals(200, server.send(new HttpDelete(server.uri(
                    "/eventhandler/unsubscribe?event_type=other&system_name=panel"))).statusCode());
            before = server.get("/eventhandler/mgmt/subscriptions").body();
        }
        try (TestServer server = start()) {
            String after = server.get("/eventhandler/mgmt/subscriptions").body();
            assertEquals(JSON.readTree(before), JSON.readTree(after));
            JsonNode only = JSON.readTree(after).path("data").get(0);
            assertEquals(1, JSON.readTree(after).path("count").asInt(), after);
            assertEquals("C", only.path("filterMetaData").path("unit").asText(), after);
            assertEquals("sensor-1", only.path("sources").get(0).path("systemName").asText(), after);
        }
    }

    /**
     * A push subscription's cursor is kept in the store, made at the subscribe and moved at a clean stop: after a
     * restart its subscriber gets what came since, and nothing it had again. (MariaDB refused the first cursor
     * save's SQL, which H2 took.)
     */
    @Test
    void aPushSubscriptionsCursorSurvivesARestart() throws Exception {
        try (StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            try (TestServer server = start()) {
                Reply subscribed = server.post("/eventhandler/subscribe", subscriber.subscription("panel", "alarms", ""));
                assertEquals(200, subscribed.statusCode(), subscribed.body());
                server.publish("alarms", "e0");
                server.publish("alarms", "e1");
                subscriber.awaitEvents(2);
            }
            try (TestServer server = start()) {
                server.publish("alarms", "e2");
                subscriber.awaitEvents(3);
                assertEquals(List.of("e0", "e1", "e2"), subscriber.payloads());
            }
        }
    }

    /**
     * An event its push subscriber refused for good is kept on the subscription's dead-letter list across a restart,
     * the newest push.dead-letter-max of them (kept, replaced and cut in the cursors' transaction: SQL that MariaDB
     * must take too), and the list goes with its subscription.
     */
    @Test
    void aPushSubscriptionsDeadLettersSurviveARestartWithinTheirBound() throws Exception {
        String[] poison = {"push.poison-retries", "0", "push.dead-letter-max", "2"};
        try (StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                payload -> payload.startsWith("poison") ? 400 : 200)) {
            List<Long> ids = new ArrayList<>();
            try (TestServer server = start(poison)) {
                Reply subscribed = server.post("/eventhandler/subscribe", subscriber.subscription("panel", "alarms", ""));
                assertEquals(200, subscribed.statusCode(), subscribed.body());
                for (int i = 0; i < 3; i++) {
                    ids.add(server.publish("alarms", "poison" + i));
                }
                server.publish("alarms", "e0");
                subscriber.awaitEvents(1);
                Await.until("the oldest letter dropped", WAIT, () -> server.counted(
                        "eventhandler_push_dead_letters_dropped_total{subscription=\"1\"}") == 1);
            }
            try (TestServer server = start(poison)) {
                JsonNode letters = JSON.readTree(server.get("/eventhandler/mgmt/subscriptions/1/dead-letters").body());
                assertEquals(List.of(ids.get(1), ids.get(2)),
                        List.of(letters.get("data").get(0).get("eventId").asLong(),
                                letters.get("data").get(1).get("eventId").asLong()));
                // Refused again: the letter is replaced, not doubled.
                Reply again = server.post("/eventhandler/mgmt/subscriptions/1/dead-letters/redeliver?eventId="
                        + ids.get(2), "");
                assertEquals(200, again.statusCode(), again.body());
                Await.until("set aside again", WAIT, () -> server.counted(
                        "eventhandler_push_dead_letters_total{subscription=\"1\"}") == 1);
                Await.until("saved again", WAIT, () -> StandInSubscriber.read(server.get(
                        "/eventhandler/mgmt/subscriptions/1/dead-letters").body()).get("count").asInt() == 2);
                assertEquals(200, server.send(new HttpDelete(server.uri("/eventhandler/mgmt/subscriptions/1")))
                        .statusCode());
            }
            try (TestServer server = start(poison)) {
                assertEquals(404, server.get("/eventhandler/mgmt/subscriptions/1/dead-letters").statusCode());
                Reply subscribed = server.post("/eventhandler/subscribe", subscriber.subscription("panel", "alarms", ""));
                assertEquals(200, subscribed.statusCode(), subscribed.body());
                long id = StandInSubscriber.read(server.get("/eventhandler/mgmt/subscriptions").body())
                        .get("data").get(0).get("id").asLong();
                assertEquals(0, JSON.readTree(server.get("/eventhandler/mgmt/subscriptions/" + id + "/dead-letters")
                        .body()).get("count").asInt(), "a new subscription starts with none, whatever its id");
            }
        }
    }

    /**
     * The Authorization system's last answer per subscriber is kept in the store: after a restart with the
     * Authorization system down, a push subscription keeps its publishers; an update forgets them, here too.
     */
    @Test
    void theAuthorizationSystemsLastAnswersSurviveARestart() throws Exception {
        int port = TestServer.freePort();
        String[] authorization = {"security.authorization.enabled", "true",
                "security.authorization.uri", "http://127.0.0.1:" + port + "/authorization",
                "security.authorization.start-retries", "0", "security.authorization.retry-seconds", "1"};
        String request = "{\"eventType\":\"alarms\",\"subscriberSystem\":{\"systemName\":\"panel\","
                + "\"address\":\"127.0.0.1\",\"port\":9001},\"notifyUri\":\"/notify\"}";
        try (AuthorizationStandIn standIn = AuthorizationStandIn.plainHttp(port);
             TestServer server = start(authorization)) {
            standIn.authorize("panel", "sensor-1");
            assertEquals(200, server.post("/eventhandler/subscribe", request).statusCode());
        }
        try (TestServer server = start(authorization)) {
            assertEquals(List.of("sensor-1"), sourceNames(server), "the kept answer, while it is down");
            assertEquals(503, server.post("/eventhandler/subscribe", request.replace("panel", "new-panel"))
                    .statusCode(), "a subscriber it never answered for waits for it");
            String update = "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"payload\":\"7\"}";
            assertEquals(200, server.post("/eventhandler/publish/authupdate", update).statusCode());
            assertEquals(List.of(), sourceNames(server), "forgotten, and it cannot be asked: fail closed");
        }
        try (TestServer server = start(authorization)) {
            assertEquals(List.of(), sourceNames(server), "forgotten in the store too");
        }
    }

    private static List<String> sourceNames(TestServer server) throws Exception {
        List<String> names = new ArrayList<>();
        for (JsonNode source : JSON.readTree(server.get("/eventhandler/mgmt/subscriptions").body())
                .path("data").get(0).path("sources")) {
            names.add(source.path("systemName").asText());
        }
        return names;
    }

    @Test
    void theLogHoldsEveryEventExactlyAsDelivered() throws Exception {
        try (TestServer server = start();
             SseStream stream = server.subscribe("?eventType=logged&eventType=other")) {
            for (int i = 0; i < 100; i++) {
                publish(server, "{\"eventType\":\"logged\",\"payload\":\"p" + i + " \\u00e9\\\"q\\\"\","
                        + "\"metaData\":{\"unit\":\"c\"},\"source\":{\"systemName\":\"sensor-" + (i % 3) + "\"}}");
            }
            Reply batch = server.post("/eventhandler/publish/batch", "[{\"eventType\":\"Other\",\"payload\":\"x\"},"
                    + "{\"eventType\":\"logged\",\"payload\":\"y\"}]");
            assertEquals(200, batch.statusCode(), batch.body());
            List<Frame> delivered = stream.events(102, WAIT);
            Await.until("102 events in the log", WAIT, () -> logged(server, "").size() == 102);
            List<JsonNode> log = logged(server, "");
            for (int i = 0; i < delivered.size(); i++) {
                assertEquals(JSON.readTree(delivered.get(i).data()), log.get(i), "event " + i);
            }
        }
    }

    @Test
    void aResumeFromBeforeTheWindowIsServedFromTheStoreThenLive() throws Exception {
        try (TestServer server = start("replay.window-events", "5")) {
            List<Long> wanted = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                long id = server.publish(i % 2 == 0 ? "wanted" : "unwanted", "e" + i);
                if (i % 2 == 0 && id > 2) {
                    wanted.add(id);
                }
            }
            try (SseStream stream = server.subscribe("?eventType=wanted", "Last-Event-ID", "2")) {
                List<Frame> replayed = stream.events(wanted.size(), WAIT);
                for (int i = 0; i < wanted.size(); i++) {
                    assertEquals(Long.toString(wanted.get(i)), replayed.get(i).id());
                    assertEquals("wanted", replayed.get(i).event(), "no gap notice: nothing is missing");
                }
                long live = server.publish("wanted", "live");
                assertEquals(Long.toString(live), stream.nextEvent(WAIT).id(), "live right after, no duplicate");
            }
        }
    }

    @Test
    void aResumeFromTheStoreAppliesTheSubscribersFilters() throws Exception {
        try (TestServer server = start("replay.window-events", "1")) {
            List<Long> celsius = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String unit = i % 4 == 0 ? "C" : "F";
                long id = publish(server, "{\"eventType\":\"temp\",\"payload\":\"" + i + "\",\"metaData\":{\"unit\":\""
                        + unit + "\"}}");
                if (unit.equals("C")) {
                    celsius.add(id);
                }
            }
            try (SseStream stream = server.subscribe("?eventType=temp&meta.unit=c&lastEventId=0")) {
                List<Frame> replayed = stream.events(celsius.size(), WAIT);
                for (int i = 0; i < celsius.size(); i++) {
                    assertEquals(Long.toString(celsius.get(i)), replayed.get(i).id());
                }
                publish(server, "{\"eventType\":\"temp\",\"payload\":\"f\",\"metaData\":{\"unit\":\"F\"}}");
                long live = publish(server, "{\"eventType\":\"temp\",\"payload\":\"c\",\"metaData\":{\"unit\":\"c\"}}");
                assertEquals(Long.toString(live), stream.nextEvent(WAIT).id());
            }
        }
    }

    @Test
    void aSubscriberResumesAcrossARestartWithNoGapAndNoDuplicate() throws Exception {
        try (TestServer server = start()) {
            for (int i = 1; i <= 20; i++) {
                server.publish("restart", "e" + i);
            }
        }
        try (TestServer server = start();
             SseStream stream = server.subscribe("?eventType=restart", "Last-Event-ID", "5")) {
            List<Frame> replayed = stream.events(15, WAIT);
            for (int i = 0; i < 15; i++) {
                assertEquals(Long.toString(6 + i), replayed.get(i).id());
            }
            assertEquals(Long.toString(21), Long.toString(server.publish("restart", "e21")));
            assertEquals("21", stream.nextEvent(WAIT).id());
        }
    }

    @Test
    void aLongCatchUpComesInPagesThatEndTheStream() throws Exception {
        try (TestServer server = start("replay.window-events", "5", "store.replay-page-events", "10")) {
            for (int i = 1; i <= 35; i++) {
                server.publish("paged", "e" + i);
            }
            List<String> ids = new ArrayList<>();
            String resumeFrom = "0";
            for (int page = 0; page < 2; page++) {
                try (SseStream stream = server.subscribe("?eventType=paged", "Last-Event-ID", resumeFrom)) {
                    stream.events(10, WAIT).forEach(frame -> ids.add(frame.id()));
                    Frame end = stream.nextEvent(WAIT);
                    assertEquals(PageEnd.EVENT_TYPE, end.event(), end.toString());
                    assertEquals("{\"lastEventId\":" + end.id() + "}", end.data());
                    stream.awaitEnd(WAIT);
                    assertTrue(stream.endedCleanly(), "a page ends the stream cleanly");
                    resumeFrom = stream.lastEventId();
                }
            }
            assertEquals("20", resumeFrom);
            // The last page reaches the replay window (31-35): the stream goes on with it, then live.
            try (SseStream stream = server.subscribe("?eventType=paged", "Last-Event-ID", resumeFrom)) {
                stream.events(15, WAIT).forEach(frame -> ids.add(frame.id()));
                long live = server.publish("paged", "live");
                ids.add(stream.nextEvent(WAIT).id());
                assertEquals(Long.toString(live), ids.get(ids.size() - 1));
            }
            assertEquals(36, ids.size());
            for (int i = 0; i < 36; i++) {
                assertEquals(Long.toString(i + 1), ids.get(i));
            }
        }
    }

    /**
     * Several types, resumed from the store page by page: each type's index is walked on its own and the pages
     * merge them, so the events come in id order across the types, each once.
     */
    @Test
    void aResumeOfSeveralTypesFromTheStoreComesInIdOrder() throws Exception {
        try (TestServer server = start("replay.window-events", "1", "store.replay-page-events", "7")) {
            List<String> wanted = new ArrayList<>();
            for (int i = 1; i <= 60; i++) {
                String type = List.of("north", "south", "east").get(i % 3 == 0 ? 2 : i % 5 == 0 ? 1 : 0);
                long id = server.publish(type, "e" + i);
                if (!type.equals("east")) {
                    wanted.add(Long.toString(id));
                }
            }
            List<String> received = new ArrayList<>();
            String resumeFrom = "0";
            while (received.size() < wanted.size()) {
                try (SseStream stream = server.subscribe("?eventType=north&eventType=south", "Last-Event-ID",
                        resumeFrom)) {
                    while (received.size() < wanted.size()) {
                        Frame frame = stream.nextEvent(WAIT);
                        if (!PageEnd.EVENT_TYPE.equals(frame.event())) {
                            received.add(frame.id());
                        }
                    }
                } catch (SseStream.StreamEndedException pageEnded) {
                    // the next page, from where this one ended
                }
                resumeFrom = received.isEmpty() ? "0" : received.get(received.size() - 1);
            }
            assertEquals(wanted, received);
        }
    }

    /**
     * A time range is not in the index a page walks: a page examines a bounded number of events and may come back
     * short, even empty, with a nextAfterId to go on from, so that a range far from most of the log costs no page
     * more than any other.
     */
    @Test
    void aTimeRangeIsPagedAtABoundedCostAndFollowingThePagesFindsItAll() throws Exception {
        try (TestServer server = start()) {
            Instant early = Instant.now().minusSeconds(100);
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String timeStamp = i == 0 || i >= 35 ? ",\"timeStamp\":\"" + early + "\"" : "";
                ids.add(publish(server, "{\"eventType\":\"ranged\",\"payload\":\"e" + i + "\"" + timeStamp + "}"));
            }
            Await.until("40 events in the log", WAIT, () -> logged(server, "").size() == 40);
            String range = "/eventhandler/mgmt/events?from=" + early.minusSeconds(1) + "&to=" + early.plusSeconds(1);
            JsonNode first = JSON.readTree(server.get(range + "&limit=1").body());
            assertEquals(ids.get(0), first.get("data").get(0).get("id").asLong());
            JsonNode empty = JSON.readTree(server.get(range + "&limit=1&afterId=" + first.get("nextAfterId").asLong())
                    .body());
            assertEquals(0, empty.get("count").asInt(), "a page examines at most 10 x its limit");
            assertEquals(ids.get(10), empty.get("nextAfterId").asLong());
            String query = range.substring("/eventhandler/mgmt/events".length());
            assertEquals(6, logged(server, query + "&limit=1").size(), "following nextAfterId finds every one");
            assertEquals(6, logged(server, query).size());
        }
    }

    /**
     * A page's last events may all be filtered out: its closing notice still moves the client's resume point
     * past them (also for clients that take an id only from a frame with data), or it would be sent the same
     * page again and again.
     */
    @Test
    void aPageWhoseLastEventsAreFilteredOutStillMovesTheResumePoint() throws Exception {
        try (TestServer server = start("replay.window-events", "5", "store.replay-page-events", "10")) {
            for (int i = 1; i <= 30; i++) {
                String source = i <= 3 ? "wanted" : "other";
                assertEquals(200, server.post("/eventhandler/publish", "{\"eventType\":\"filtered\",\"payload\":\"e"
                        + i + "\",\"source\":{\"systemName\":\"" + source + "\",\"address\":\"a\",\"port\":1}}")
                        .statusCode());
            }
            try (SseStream stream = server.subscribe("?eventType=filtered&source=wanted", "Last-Event-ID", "0")) {
                assertEquals(List.of("1", "2", "3"), stream.events(3, WAIT).stream().map(Frame::id).toList());
                Frame end = stream.nextEvent(WAIT);
                assertEquals(PageEnd.EVENT_TYPE, end.event(), end.toString());
                assertEquals("{\"lastEventId\":10}", end.data());
                stream.awaitEnd(WAIT);
                assertEquals("10", stream.lastEventId());
            }
        }
    }

    @Test
    void inSyncModeA200MeansTheEventIsInTheLog() throws Exception {
        ExecutorService publishers = Executors.newFixedThreadPool(4);
        try (TestServer server = start("store.mode", "sync");
             SseStream stream = server.subscribe("?eventType=durable")) {
            ConcurrentLinkedQueue<Long> acknowledged = new ConcurrentLinkedQueue<>();
            List<Future<?>> runs = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                runs.add(publishers.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        long id = server.publish("durable", "e" + i);
                        acknowledged.add(id);
                    }
                }));
            }
            for (Future<?> run : runs) {
                run.get();
            }
            long id = server.publish("durable", "checked");
            JsonNode first = JSON.readTree(server.get("/eventhandler/mgmt/events?afterId=" + (id - 1) + "&limit=1").body());
            assertEquals(id, first.get("data").get(0).get("id").asLong(), "committed before the 200");
            acknowledged.add(id);

            List<Frame> delivered = stream.events(401, WAIT);
            long previous = 0;
            for (Frame frame : delivered) {
                long next = Long.parseLong(frame.id());
                assertTrue(next > previous, "delivered in id order");
                previous = next;
            }
            List<Long> logIds = logged(server, "?eventType=durable").stream().map(e -> e.get("id").asLong()).toList();
            assertEquals(401, logIds.size());
            assertTrue(logIds.containsAll(acknowledged));
        } finally {
            publishers.shutdownNow();
        }
    }

    @Test
    void retentionByCountKeepsTheNewestAndAResumeIsToldWhatIsGone() throws Exception {
        try (TestServer server = start("store.retention-events", "10", "store.retention-check-seconds", "1",
                "replay.window-events", "1")) {
            for (int i = 1; i <= 30; i++) {
                server.publish("kept", "e" + i);
            }
            Await.until("only the newest 10 events in the log", WAIT, () -> {
                List<JsonNode> log = logged(server, "");
                return log.size() == 10 && log.get(0).get("id").asLong() == 21;
            });
            try (SseStream stream = server.subscribe("?eventType=kept", "Last-Event-ID", "0")) {
                assertEquals(new ReplayGap(0, 20), stream.nextGapNotice(WAIT));
                List<Frame> replayed = stream.events(10, WAIT);
                assertEquals("21", replayed.get(0).id());
                assertEquals("30", replayed.get(9).id());
            }
        }
    }

    @Test
    void retentionByAgeDeletesOldEvents() throws Exception {
        try (TestServer server = start("store.retention-seconds", "60", "store.retention-check-seconds", "1")) {
            String old = Instant.now().minusSeconds(100).toString();
            for (int i = 0; i < 5; i++) {
                publish(server, "{\"eventType\":\"aged\",\"payload\":\"old\",\"timeStamp\":\"" + old + "\"}");
            }
            for (int i = 0; i < 5; i++) {
                server.publish("aged", "new");
            }
            // The writer is asynchronous: five events in the log may still be the old ones, not yet deleted,
            // while the new ones wait to be written.
            Await.until("the old events deleted and the new ones written", WAIT, () -> {
                List<JsonNode> logged = logged(server, "");
                return logged.size() == 5 && logged.stream().allMatch(event -> "new".equals(event.get("payload").asText()));
            });
        }
    }

    @Test
    void theLogCanBeQueriedByTypeTimeAndPage() throws Exception {
        try (TestServer server = start()) {
            Instant before = Instant.now().minusSeconds(1);
            for (int i = 0; i < 30; i++) {
                server.publish(i % 3 == 0 ? "Alarm" : "reading", "e" + i);
            }
            Instant after = Instant.now().plusSeconds(1);
            Await.until("30 events in the log", WAIT, () -> logged(server, "").size() == 30);

            assertEquals(10, logged(server, "?eventType=alarm").size(), "types match case-insensitively");
            assertEquals(30, logged(server, "?eventType=ALARM&eventType=reading").size());
            assertEquals(30, logged(server, "?from=" + before + "&to=" + after).size());
            assertEquals(0, logged(server, "?from=" + after).size());

            JsonNode page = JSON.readTree(server.get("/eventhandler/mgmt/events?afterId=5&limit=7").body());
            assertEquals(7, page.get("count").asInt());
            assertEquals(6, page.get("data").get(0).get("id").asLong());
            assertEquals(12, page.get("nextAfterId").asLong());
            JsonNode last = JSON.readTree(server.get("/eventhandler/mgmt/events?afterId=25&limit=7").body());
            assertEquals(5, last.get("count").asInt());
            assertNull(last.get("nextAfterId"), "the last page says there is no more");

            for (String bad : List.of("?limit=0", "?limit=100000", "?afterId=-1", "?afterId=x", "?from=yesterday",
                    "?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "?eventType=bad%0Atype", "?colour=red",
                    "?limit=1&limit=2")) {
                Reply reply = server.get("/eventhandler/mgmt/events" + bad);
                assertEquals(400, reply.statusCode(), bad + ": " + reply.body());
                assertTrue(reply.body().contains("\"errorMessage\""), bad);
            }
        }
    }

    @Test
    void healthAndMetricsReportTheStore() throws Exception {
        try (TestServer server = start()) {
            server.publish("healthy", "e");
            Await.until("the event written", WAIT, () -> server.metric("eventhandler_store_written_events_total") == 1);
            Reply health = server.get("/eventhandler/mgmt/health");
            assertEquals(200, health.statusCode());
            JsonNode body = JSON.readTree(health.body());
            assertEquals("UP", body.get("status").asText());
            assertEquals("async", body.get("store").get("mode").asText());
            assertEquals(1, body.get("store").get("lastLoggedId").asLong());
            assertEquals(1, server.metric("eventhandler_store_up"));
        }
    }

    @Test
    void aDatabaseOutageDoesNotStopLiveDeliveryAndTheLogCatchesUp() throws Exception {
        try (TcpProxy proxy = new TcpProxy(database.host(), database.port());
             TestServer server = start(database.settingsVia(proxy.port()), "store.timeout-seconds", "2");
             SseStream stream = server.subscribe("?eventType=outage")) {
            for (int i = 0; i < 10; i++) {
                server.publish("outage", "before");
            }
            stream.events(10, WAIT);
            Await.until("10 events in the log", WAIT, () -> logged(server, "").size() == 10);

            proxy.cut();
            for (int i = 0; i < 20; i++) {
                server.publish("outage", "during");
            }
            List<Frame> live = stream.events(20, WAIT);
            assertEquals("30", live.get(19).id(), "live delivery goes on without the database");
            Await.until("the health endpoint reports the outage", WAIT,
                    () -> server.get("/eventhandler/mgmt/health").statusCode() == 503);
            assertEquals(0, server.metric("eventhandler_store_up"));
            JsonNode health = JSON.readTree(server.get("/eventhandler/mgmt/health").body());
            assertEquals("DEGRADED", health.get("status").asText());
            assertEquals(20, health.get("store").get("bufferedEvents").asLong());

            proxy.restore();
            Await.until("the log caught up", WAIT, () -> server.get("/eventhandler/mgmt/health").statusCode() == 200
                    && logged(server, "").size() == 30);
            assertEquals(0, server.metric("eventhandler_store_dropped_events_total"));
        }
    }

    @Test
    void inSyncModeAPublishGets503WhileTheDatabaseIsDown() throws Exception {
        try (TcpProxy proxy = new TcpProxy(database.host(), database.port());
             TestServer server = start(database.settingsVia(proxy.port()), "store.mode", "sync",
                     "store.timeout-seconds", "2", "store.sync-timeout-seconds", "4");
             SseStream stream = server.subscribe("?eventType=refused")) {
            long before = server.publish("refused", "before");
            proxy.cut();
            long start = System.nanoTime();
            Reply refused = server.post("/eventhandler/publish", "{\"eventType\":\"refused\",\"payload\":\"x\"}");
            assertEquals(503, refused.statusCode(), refused.body());
            assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(6)) < 0,
                    "refused within the sync timeout, not hung");
            assertFalse(refused.header("Retry-After").isEmpty());

            proxy.restore();
            long[] after = new long[1];
            Await.until("publishing works again", WAIT, () -> {
                Reply reply = server.post("/eventhandler/publish", "{\"eventType\":\"refused\",\"payload\":\"after\"}");
                if (reply.statusCode() == 200) {
                    after[0] = Long.parseLong(reply.body().replaceAll("\\D", ""));
                    return true;
                }
                return false;
            });
            assertEquals(Long.toString(before), stream.nextEvent(WAIT).id());
            Frame next = stream.nextEvent(WAIT);
            assertEquals(Long.toString(after[0]), next.id(), "a refused event is never delivered");
            assertEquals("after", JSON.readTree(next.data()).get("payload").asText());
        }
    }

    @Test
    void aWriterBehindAHealthyDatabaseRefusesPublishesWith503AndDropsNothing() throws Exception {
        String batch = batchOf(10, "pressed");
        try (TestServer server = start("store.buffer-events", "30", "publish.max-batch-events", "10",
                "store.timeout-seconds", "60");
             SseStream stream = server.subscribe("?eventType=pressed")) {
            List<Long> acknowledged = new ArrayList<>();
            Reply refused;
            try (AutoCloseable held = database.holdWrites()) {
                for (int i = 0; i < 3; i++) {
                    acknowledged.addAll(ids(server.post("/eventhandler/publish/batch", batch)));
                }
                refused = server.post("/eventhandler/publish/batch", batch);
                assertEquals(503, refused.statusCode(), "the buffer holds 30 events: " + refused.body());
                assertEquals("1", refused.header("Retry-After"));
                JsonNode error = JSON.readTree(refused.body());
                assertEquals("UNAVAILABLE", error.get("exceptionType").asText());
                assertTrue(error.get("errorMessage").asText().contains("store.buffer-events"), refused.body());

                JsonNode store = JSON.readTree(server.get("/eventhandler/mgmt/health").body()).get("store");
                assertEquals("UP", store.get("status").asText(), "the database works; the writer is behind");
                assertEquals(30, store.get("bufferedEvents").asLong());
                assertEquals(1, store.get("refusedPublishes").asLong());
                assertEquals(1, server.metric("eventhandler_store_refused_publishes_total"));
            }
            List<Frame> delivered = stream.events(30, WAIT);
            Await.until("the writer caught up", WAIT, () -> server.metric("eventhandler_store_buffered_events") == 0);
            long next = server.publish("pressed", "after");
            assertEquals(31, next, "a refused publish takes no ids");
            assertEquals("31", stream.nextEvent(WAIT).id(), "a refused event is never delivered");
            assertEquals(acknowledged, delivered.stream().map(frame -> Long.parseLong(frame.id())).toList());

            Await.until("the log caught up", WAIT, () -> logged(server, "").size() == 31);
            List<Long> logIds = logged(server, "").stream().map(event -> event.get("id").asLong()).toList();
            assertTrue(logIds.containsAll(acknowledged), "every acknowledged event is in the log: " + logIds);
            assertEquals(0, server.metric("eventhandler_store_dropped_events_total"));
        }
    }

    /**
     * A publish the writer has no room for is refused before its body is parsed, which is what a flood would
     * otherwise cost the server: a body that is not even JSON gets the writer's 503, not a 400.
     */
    @Test
    void aPublishTheWriterHasNoRoomForIsRefusedBeforeItsBodyIsParsed() throws Exception {
        String notJson = "{\"eventType\":\"pressed\",\"payload\":";
        try (TestServer server = start("store.buffer-events", "10", "publish.max-batch-events", "10",
                "store.timeout-seconds", "60")) {
            try (AutoCloseable held = database.holdWrites()) {
                ids(server.post("/eventhandler/publish/batch", batchOf(10, "pressed")));
                Reply refused = server.post("/eventhandler/publish", notJson);
                assertEquals(503, refused.statusCode(), "the buffer holds 10 events: " + refused.body());
                assertEquals("1", refused.header("Retry-After"));
                JsonNode error = JSON.readTree(refused.body());
                assertEquals("UNAVAILABLE", error.get("exceptionType").asText());
                assertTrue(error.get("errorMessage").asText().contains("store.buffer-events"), refused.body());
                assertEquals(1, server.metric("eventhandler_store_refused_publishes_total"));
            }
            Await.until("the writer caught up", WAIT, () -> server.metric("eventhandler_store_buffered_events") == 0);
            Reply parsed = server.post("/eventhandler/publish", notJson);
            assertEquals(400, parsed.statusCode(), "with room in the buffer the body is parsed: " + parsed.body());
            assertEquals("BAD_PAYLOAD", JSON.readTree(parsed.body()).get("exceptionType").asText());
        }
    }

    @Test
    void eventsDroppedWhileTheDatabaseIsDownAreReportedExactlyWhereTheyWereAcrossARestart() throws Exception {
        try (TcpProxy proxy = new TcpProxy(database.host(), database.port())) {
            Map<String, String> settings = database.settingsVia(proxy.port());
            String[] options = {"store.timeout-seconds", "2", "store.buffer-events", "10",
                    "publish.max-batch-events", "10", "replay.window-events", "1"};
            long lastId = 0;
            try (TestServer server = start(settings, options)) {
                for (int outage = 0; outage < 2; outage++) {
                    for (int i = 0; i < 10; i++) {
                        lastId = server.publish("holes", "kept");
                    }
                    long logged = lastId;
                    Await.until("the log caught up", WAIT, () -> server.metric("eventhandler_store_last_logged_id") == logged);
                    proxy.cut();
                    lastId = server.publish("holes", "first of the outage");
                    Await.until("the store is down", WAIT, () -> server.metric("eventhandler_store_up") == 0);
                    for (int i = 0; i < 30; i++) {
                        lastId = server.publish("holes", "during the outage");
                    }
                    proxy.restore();
                    Await.until("the log caught up", WAIT, () -> server.metric("eventhandler_store_up") == 1
                            && server.metric("eventhandler_store_buffered_events") == 0);
                }
                for (int i = 0; i < 5; i++) {
                    lastId = server.publish("holes", "after");
                }
                long published = lastId;
                Await.until("the log caught up", WAIT, () -> server.metric("eventhandler_store_last_logged_id") == published);
                List<String> expected = logWithHoles(server, lastId);
                assertEquals(2, expected.stream().filter(frame -> frame.startsWith("gap")).count(),
                        "one hole per outage: " + expected);
                assertEquals(2, server.metric("eventhandler_store_missing_ranges"));
                long missingIds = lastId - logged(server, "").size();
                assertTrue(missingIds >= 2 * 21, "31 events in each outage, 10 kept: " + expected);
                assertEquals(missingIds, server.metric("eventhandler_store_dropped_events_total"),
                        "every dropped event counted");
                assertEquals(expected, resumedFromZero(server, expected.size()));
            }
            try (TestServer server = start(settings, options)) {
                List<String> expected = logWithHoles(server, lastId);
                assertEquals(2, expected.stream().filter(frame -> frame.startsWith("gap")).count(),
                        "the holes survive a restart: " + expected);
                assertEquals(expected, resumedFromZero(server, expected.size()));
            }
        }
    }

    /**
     * What a resume from 0 must receive: every event the log holds, and a notice for each run of ids up to
     * {@code lastId} that it does not hold, where the run lies.
     */
    private static List<String> logWithHoles(TestServer server, long lastId) {
        return ResumeTranscript.expected(logged(server, "").stream().map(event -> event.get("id").asLong()).toList(),
                lastId);
    }

    private static List<String> resumedFromZero(TestServer server, int frames) throws InterruptedException {
        try (SseStream stream = server.subscribe("?eventType=holes", "Last-Event-ID", "0")) {
            return stream.events(frames, WAIT).stream().map(ResumeTranscript::line).toList();
        }
    }

    private static String batchOf(int events, String eventType) {
        StringBuilder batch = new StringBuilder("[");
        for (int i = 0; i < events; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"eventType\":\"").append(eventType)
                    .append("\",\"payload\":\"").append(i).append("\"}");
        }
        return batch.append(']').toString();
    }

    private static List<Long> ids(Reply reply) {
        if (reply.statusCode() != 200) {
            throw new AssertionError("publish answered " + reply.statusCode() + ": " + reply.body());
        }
        try {
            List<Long> ids = new ArrayList<>();
            JSON.readTree(reply.body()).get("ids").forEach(id -> ids.add(id.asLong()));
            return ids;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long publish(TestServer server, String json) {
        Reply reply = server.post("/eventhandler/publish", json);
        if (reply.statusCode() != 200) {
            throw new AssertionError("publish answered " + reply.statusCode() + ": " + reply.body());
        }
        return Long.parseLong(reply.body().replaceAll("\\D", ""));
    }

    /** Every event the log holds for the query, following the pages. */
    static List<JsonNode> logged(TestServer server, String query) {
        List<JsonNode> events = new ArrayList<>();
        String separator = query.isEmpty() ? "?" : "&";
        long afterId = 0;
        while (true) {
            Reply reply = server.get("/eventhandler/mgmt/events" + query + separator + "afterId=" + afterId);
            if (reply.statusCode() != 200) {
                throw new AssertionError("mgmt/events answered " + reply.statusCode() + ": " + reply.body());
            }
            try {
                JsonNode page = JSON.readTree(reply.body());
                page.get("data").forEach(events::add);
                if (page.get("nextAfterId") == null) {
                    return events;
                }
                afterId = page.get("nextAfterId").asLong();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

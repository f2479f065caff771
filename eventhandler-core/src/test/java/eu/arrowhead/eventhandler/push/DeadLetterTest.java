package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * A push subscriber that refuses one event for good (a 4xx other than 408 and 429) does not hold the events behind
 * it: after push.poison-retries more tries the event is set aside on the subscription's dead-letter list, which a
 * sysop lists, redelivers and drops; one that refuses everything is paused until a sysop resumes it.
 */
class DeadLetterTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String LETTERS = "/eventhandler/mgmt/subscriptions/1/dead-letters";

    @TempDir
    Path directory;

    private TestServer start(String... more) {
        List<String> settings = new ArrayList<>(List.of("store.mode", "async",
                "store.url", "jdbc:h2:file:" + directory.resolve("log"), "store.user", "sa", "store.password", "",
                "store.id-mark-file", directory.resolve("log.ids").toString()));
        settings.addAll(List.of(more));
        return PushDeliveryTest.server(settings.toArray(String[]::new));
    }

    /** The lines {@code source} logs from now on, until detached from {@link #logger}. */
    private static ListAppender<ILoggingEvent> capture(Class<?> source) {
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger(source).addAppender(lines);
        return lines;
    }

    private static ch.qos.logback.classic.Logger logger(Class<?> source) {
        return (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(source);
    }

    private static JsonNode letters(TestServer server) {
        Reply reply = server.get(LETTERS);
        assertEquals(200, reply.statusCode(), reply.body());
        return StandInSubscriber.read(reply.body());
    }

    private static JsonNode redeliver(TestServer server, String query) {
        Reply reply = server.post(LETTERS + "/redeliver" + query, "");
        assertEquals(200, reply.statusCode(), reply.body());
        return StandInSubscriber.read(reply.body());
    }

    @Test
    void aRefusedEventIsSetAsideTheOthersArriveInOrderAndARedeliverySendsIt() throws Exception {
        ListAppender<ILoggingEvent> lines = capture(LogCursors.class);
        AtomicBoolean refuses = new AtomicBoolean(true);
        try (TestServer server = start("push.poison-retries", "2");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.equals("poison") && refuses.get() ? 400 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            List<String> expected = new ArrayList<>();
            long poison = 0;
            for (int i = 0; i < 10; i++) {
                String payload = i == 3 ? "poison" : "e" + i;
                long id = server.publish("reading", payload);
                if (i == 3) {
                    poison = id;
                } else {
                    expected.add(payload);
                }
            }
            subscriber.awaitEvents(9);
            assertEquals(expected, subscriber.payloads(), "every other event, in order");
            assertEquals(12, subscriber.requests(), "the refused event was tried 1 + push.poison-retries times");
            Await.until("the letter is listed", WAIT, () -> letters(server).get("count").asInt() == 1);
            JsonNode letter = letters(server).get("data").get(0);
            assertEquals(poison, letter.get("eventId").asLong());
            assertEquals("reading", letter.get("eventType").asText());
            assertEquals(400, letter.get("status").asInt());
            assertEquals("refused with 400", letter.get("answer").asText());
            assertEquals(1, server.counted("eventhandler_push_dead_letters_total{subscription=\"1\"}"));
            assertEquals(1, lines.list.stream().filter(line -> line.getFormattedMessage().contains("set aside"))
                    .count(), "said once, not per try");

            refuses.set(false);
            JsonNode redelivery = redeliver(server, "");
            assertEquals(poison, redelivery.get("redelivered").get(0).asLong());
            assertEquals(0, redelivery.get("notInLog").size());
            subscriber.awaitEvents(10);
            assertEquals("poison", subscriber.payloads().get(9));
            Await.until("a letter its subscriber took leaves the list", WAIT,
                    () -> letters(server).get("count").asInt() == 0);
            server.publish("reading", "after");
            subscriber.awaitEvents(11);
            assertEquals("after", subscriber.payloads().get(10), "the cursor goes on where it was");
        } finally {
            logger(LogCursors.class).detachAppender(lines);
        }
    }

    /**
     * The refusals of an event set aside end with it: the cursor takes the next event as from a subscriber that keeps
     * up, and a failure of that one starts another outage, which is said again (the retry pause of 1 s outlasts the
     * failure line's throttle).
     */
    @Test
    void aFailureAfterAnEventSetAsideIsSaidAgain() throws Exception {
        ListAppender<ILoggingEvent> lines = capture(PushSender.class);
        AtomicInteger downTries = new AtomicInteger();
        try (TestServer server = start("push.poison-retries", "1", "push.retry-initial-millis", "1000",
                "push.retry-max-millis", "1000");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(payload -> switch (payload) {
                 case "poison" -> 400;
                 case "down" -> downTries.incrementAndGet() == 1 ? 503 : 200;
                 default -> 200;
             })) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            server.publish("reading", "poison");
            Await.until("the letter is listed", WAIT, () -> letters(server).get("count").asInt() == 1);
            server.publish("reading", "down");
            subscriber.awaitEvents(1);
            assertEquals(List.of("down"), subscriber.payloads());
            assertEquals(2, lines.list.stream().filter(line -> line.getFormattedMessage().startsWith("push to ")
                    && line.getFormattedMessage().contains(" failed (")).count(),
                    "the poison's first refusal and the next event's failure: " + lines.list);
        } finally {
            logger(PushSender.class).detachAppender(lines);
        }
    }

    /**
     * A letter redelivered twice before its subscriber takes it is sent once: the second redelivery finds it in flight
     * (retried while the subscriber answers 503) and says so.
     */
    @Test
    void aLetterRedeliveredTwiceIsSentOnce() throws Exception {
        AtomicInteger poisonStatus = new AtomicInteger(400);
        try (TestServer server = start("push.poison-retries", "0", "push.retry-initial-millis", "20",
                "push.retry-max-millis", "20");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.equals("poison") ? poisonStatus.get() : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            long poison = server.publish("reading", "poison");
            server.publish("reading", "e1");
            subscriber.awaitEvents(1);
            Await.until("the letter is listed", WAIT, () -> letters(server).get("count").asInt() == 1);
            poisonStatus.set(503);
            int before = subscriber.requests();
            assertEquals(poison, redeliver(server, "").get("redelivered").get(0).asLong());
            Await.until("the redelivery is tried and refused for now", WAIT, () -> subscriber.requests() > before);
            JsonNode again = redeliver(server, "");
            assertEquals(0, again.get("redelivered").size(), again.toString());
            assertEquals(poison, again.get("alreadyQueued").get(0).asLong(), again.toString());
            assertEquals(0, again.get("left").asInt());
            poisonStatus.set(200);
            subscriber.awaitEvents(2);
            server.publish("reading", "after");
            subscriber.awaitEvents(3);
            assertEquals(List.of("e1", "poison", "after"), subscriber.payloads(), "the letter once, before what came next");
        }
    }

    /** The list comes a page at a time, in event id order; a page out of range is a 400 that says so. */
    @Test
    void theListComesInPagesAndABadPageIsAnsweredClearly() throws Exception {
        try (TestServer server = start("push.poison-retries", "0");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.startsWith("poison") ? 400 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ids.add(server.publish("reading", "poison" + i));
            }
            server.publish("reading", "e0");
            subscriber.awaitEvents(1);
            Await.until("all three listed", WAIT, () -> letters(server).get("count").asInt() == 3);
            JsonNode first = StandInSubscriber.read(server.get(LETTERS + "?limit=2").body());
            assertEquals(List.of(ids.get(0), ids.get(1)), eventIds(first));
            assertEquals(3, first.get("count").asInt(), "all of them, not the page");
            JsonNode next = StandInSubscriber.read(server.get(LETTERS + "?limit=2&afterEventId=" + ids.get(1)).body());
            assertEquals(List.of(ids.get(2)), eventIds(next));
            for (String bad : List.of("limit=0", "limit=1001", "limit=x", "afterEventId=-1", "limit=1&limit=2")) {
                Reply reply = server.get(LETTERS + "?" + bad);
                assertEquals(400, reply.statusCode(), bad + ": " + reply.body());
                assertTrue(reply.body().contains(bad.substring(0, bad.indexOf('='))), reply.body());
            }
        }
    }

    /**
     * A redelivery charges each event as it reads it and stops at the first the budget has no room for: what was
     * queued is sent, and the rest are counted as left, for a later redelivery. The subscriber answers 503 to the
     * redelivered events, so that they stay held: of events of some 3.2 KB, the cursor's share of 8 KiB takes two.
     */
    @Test
    void aRedeliveryTheBudgetHasNoRoomForAllOfQueuesWhatFitsAndCountsTheRest() throws Exception {
        AtomicInteger poisonStatus = new AtomicInteger(400);
        String big = "x".repeat(3_000);
        try (TestServer server = start("push.poison-retries", "0", "push.total-max-bytes", "32768",
                "push.pause-after-dead-letters", "0");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.startsWith("poison") ? poisonStatus.get() : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ids.add(server.publish("reading", "poison" + i + big));
            }
            server.publish("reading", "e0");
            subscriber.awaitEvents(1);
            Await.until("all five listed", WAIT, () -> letters(server).get("count").asInt() == 5);
            poisonStatus.set(503);
            JsonNode redelivery = redeliver(server, "");
            assertEquals(ids.subList(0, 2), longs(redelivery.get("redelivered")), redelivery.toString());
            assertEquals(3, redelivery.get("left").asInt(), redelivery.toString());
            assertEquals(5, letters(server).get("count").asInt(), "every letter stays listed until taken");
        }
    }

    private static List<Long> eventIds(JsonNode list) {
        List<Long> ids = new ArrayList<>();
        list.get("data").forEach(letter -> ids.add(letter.get("eventId").asLong()));
        return ids;
    }

    private static List<Long> longs(JsonNode array) {
        List<Long> values = new ArrayList<>();
        array.forEach(value -> values.add(value.asLong()));
        return values;
    }

    /** Refusals for now (5xx, 408 Request Timeout, 429 Too Many Requests) are retried until taken, never set aside. */
    @ParameterizedTest
    @ValueSource(ints = {500, 408, 429})
    void aRefusalForNowIsRetriedNotSetAside(int status) throws Exception {
        try (TestServer server = start("push.poison-retries", "0");
             StandInSubscriber subscriber = StandInSubscriber.answering(request -> request <= 4 ? status : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            server.publish("reading", "e0");
            server.publish("reading", "e1");
            subscriber.awaitEvents(2);
            assertEquals(List.of("e0", "e1"), subscriber.payloads());
            assertEquals(0, letters(server).get("count").asInt());
            assertEquals(0, server.counted("eventhandler_push_dead_letters_total{subscription=\"1\"}"));
        }
    }

    @Test
    void theListSurvivesARestart() throws Exception {
        long poison;
        try (StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                payload -> payload.equals("poison") ? 422 : 200)) {
            try (TestServer server = start("push.poison-retries", "0")) {
                PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
                server.publish("reading", "e0");
                poison = server.publish("reading", "poison");
                server.publish("reading", "e1");
                subscriber.awaitEvents(2);
            }
            try (TestServer server = start("push.poison-retries", "0")) {
                JsonNode listed = letters(server);
                assertEquals(1, listed.get("count").asInt());
                assertEquals(poison, listed.get("data").get(0).get("eventId").asLong());
                assertEquals(422, listed.get("data").get(0).get("status").asInt());
                server.publish("reading", "e2");
                subscriber.awaitEvents(3);
                assertEquals(List.of("e0", "e1", "e2"), subscriber.payloads(), "the cursor was kept past it");
                assertEquals(4, subscriber.requests(), "not sent again after the restart");
            }
        }
    }

    @Test
    void theListKeepsTheNewestUpToItsBound() throws Exception {
        try (TestServer server = start("push.poison-retries", "0", "push.dead-letter-max", "2",
                "push.pause-after-dead-letters", "0");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.startsWith("poison") ? 400 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ids.add(server.publish("reading", "poison" + i));
            }
            server.publish("reading", "e0");
            subscriber.awaitEvents(1);
            Await.until("three letters dropped", WAIT,
                    () -> server.counted("eventhandler_push_dead_letters_dropped_total{subscription=\"1\"}") == 3);
            JsonNode listed = letters(server);
            assertEquals(2, listed.get("count").asInt());
            assertEquals(ids.get(3), listed.get("data").get(0).get("eventId").asLong());
            assertEquals(ids.get(4), listed.get("data").get(1).get("eventId").asLong());
            assertEquals(5, server.counted("eventhandler_push_dead_letters_total{subscription=\"1\"}"));
        }
    }

    /**
     * A subscriber that refuses everything is paused after push.pause-after-dead-letters in a row and sent nothing
     * more: once resumed it gets every event after the last it refused, none of which it was sent while paused.
     */
    @Test
    void aSubscriberThatRefusesEverythingIsPausedUntilResumed() throws Exception {
        AtomicBoolean refuses = new AtomicBoolean(true);
        try (TestServer server = start("push.poison-retries", "0", "push.pause-after-dead-letters", "3");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(payload -> refuses.get() ? 400 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            for (int i = 0; i < 5; i++) {
                server.publish("reading", "e" + i);
            }
            Await.until("paused", WAIT, () -> server.metric("eventhandler_push_paused_subscriptions") == 1);
            JsonNode subscription = StandInSubscriber.read(server.get("/eventhandler/mgmt/subscriptions/1").body());
            assertTrue(subscription.get("paused").asBoolean());
            assertTrue(subscription.get("pausedReason").asText().contains("3 events in a row"),
                    subscription.toString());
            server.publish("reading", "e5");
            refuses.set(false);
            assertEquals(3, subscriber.requests(), "nothing sent while paused");
            Reply resumed = server.post("/eventhandler/mgmt/subscriptions/1/resume", "");
            assertEquals(200, resumed.statusCode(), resumed.body());
            assertFalse(StandInSubscriber.read(resumed.body()).has("paused"));
            subscriber.awaitEvents(3);
            assertEquals(List.of("e3", "e4", "e5"), subscriber.payloads(), "none was sent, refused, while paused");
            assertEquals(6, subscriber.requests());
            assertEquals(0, server.metric("eventhandler_push_paused_subscriptions"));
            assertEquals(3, letters(server).get("count").asInt());
        }
    }

    /** An event retention removed cannot be sent again: the redelivery says so, and its letter stays listed. */
    @Test
    void aLetterWhoseEventRetentionRemovedIsReportedNotSent() throws Exception {
        try (TestServer server = start("push.poison-retries", "0", "store.retention-events", "5",
                "store.retention-check-seconds", "1");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.equals("poison") ? 400 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            long poison = server.publish("reading", "poison");
            for (int i = 0; i < 20; i++) {
                server.publish("reading", "e" + i);
            }
            subscriber.awaitEvents(20);
            Await.until("retention deleted the refused event", WAIT, () -> StandInSubscriber.read(
                    server.get("/eventhandler/mgmt/health").body()).get("store").get("deletedUpTo").asLong() >= poison);
            JsonNode redelivery = redeliver(server, "?eventId=" + poison);
            assertEquals(0, redelivery.get("redelivered").size());
            assertEquals(poison, redelivery.get("notInLog").get(0).asLong());
            assertEquals(1, letters(server).get("count").asInt(), "it stays until a sysop deletes it");
            assertEquals(21, subscriber.requests());
        }
    }

    @Test
    void lettersAreDeletedAndBadIdsAnsweredClearly() throws Exception {
        try (TestServer server = start("push.poison-retries", "0");
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.startsWith("poison") ? 400 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            long first = server.publish("reading", "poison1");
            server.publish("reading", "poison2");
            server.publish("reading", "e0");
            subscriber.awaitEvents(1);
            Await.until("both listed", WAIT, () -> letters(server).get("count").asInt() == 2);
            assertEquals(200, delete(server, LETTERS + "?eventId=" + first).statusCode());
            assertEquals(1, letters(server).get("count").asInt());
            assertEquals(404, delete(server, LETTERS + "?eventId=" + first).statusCode(), "no longer listed");
            assertEquals(404, server.post(LETTERS + "/redeliver?eventId=" + first, "").statusCode());
            assertEquals(200, delete(server, LETTERS).statusCode());
            assertEquals(0, letters(server).get("count").asInt());

            assertEquals(400, server.get("/eventhandler/mgmt/subscriptions/x/dead-letters").statusCode());
            assertEquals(400, server.get("/eventhandler/mgmt/subscriptions/0/dead-letters").statusCode());
            assertEquals(400, delete(server, LETTERS + "?eventId=-1").statusCode());
            assertEquals(400, server.post(LETTERS + "/redeliver?eventId=abc", "").statusCode());
            assertEquals(404, server.get("/eventhandler/mgmt/subscriptions/99/dead-letters").statusCode());
            assertEquals(404, server.post("/eventhandler/mgmt/subscriptions/99/resume", "").statusCode());
            Reply unknown = server.post("/eventhandler/mgmt/subscriptions/99/dead-letters/redeliver", "");
            assertEquals(404, unknown.statusCode());
            assertEquals("DATA_NOT_FOUND", StandInSubscriber.read(unknown.body()).get("exceptionType").asText());
        }
    }

    private static Reply delete(TestServer server, String path) {
        return server.send(new HttpDelete(server.uri(path)));
    }
}

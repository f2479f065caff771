package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * Single-node push with an event store: each subscription is delivered from its cursor in the log, so a subscriber
 * that is down gets everything the log holds once it is back, in order, across a restart too; what retention took
 * first is counted and said once; a cursor goes with its subscription.
 */
class LogCursorTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path directory;

    private TestServer start(String mode, String... more) {
        List<String> settings = new ArrayList<>(List.of("store.mode", mode,
                "store.url", "jdbc:h2:file:" + directory.resolve("log"), "store.user", "sa", "store.password", "",
                "store.id-mark-file", directory.resolve("log.ids").toString()));
        settings.addAll(List.of(more));
        return PushDeliveryTest.server(settings.toArray(String[]::new));
    }

    /** A subscriber answering 503 while {@code down} is set, 200 after. */
    private static StandInSubscriber downWhile(AtomicBoolean down) {
        return StandInSubscriber.answering(request -> down.get() ? 503 : 200);
    }

    private static List<String> payloads(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "e" + i).toList();
    }

    /**
     * A server whose push queues have 16 KiB, with subscriptions to "bulk" at {@code hanging} ("stuck") and to
     * "reading" at {@code subscriber} ("consumer").
     */
    private TestServer stuckAndConsumer(StandInSubscriber hanging, StandInSubscriber subscriber) {
        TestServer server = start("async", "push.total-max-bytes", "32768");
        try {
            PushDeliveryTest.subscribe(server, hanging.subscription("stuck", "bulk", ""));
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            return server;
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    /** Publishes events e{from} to e{to - 1} of {@code type}, a hundred to a request. */
    private static void publish(TestServer server, String type, int from, int to) {
        for (int first = from; first < to; first += 100) {
            String batch = IntStream.range(first, Math.min(to, first + 100))
                    .mapToObj(i -> "{\"eventType\":\"" + type + "\",\"payload\":\"e" + i + "\"}")
                    .collect(Collectors.joining(",", "[", "]"));
            Reply reply = server.post("/eventhandler/publish/batch", batch);
            assertEquals(200, reply.statusCode(), reply.body());
        }
    }

    /**
     * Has the "consumer" of {@link #stuckAndConsumer} wait in the budget's line: "stuck" holds an event alone within
     * the queues' half (16 384 bytes), and the consumer's next does not fit beside it.
     *
     * @return the consumer's event that waits
     */
    private static String waitInLine(TestServer server, StandInSubscriber hanging) throws InterruptedException {
        server.publish("bulk", "b".repeat(12_000));
        Await.until("the hanging subscriber has its POST", WAIT, () -> hanging.requests() == 1);
        String waiting = "y".repeat(6_000);
        server.publish("reading", waiting);
        Await.until("the cursor waits in line", WAIT,
                () -> server.metric("eventhandler_push_waiting_for_room") == 1);
        return waiting;
    }

    @ParameterizedTest
    @ValueSource(strings = {"async", "sync"})
    void aSubscriberThatIsDownGetsEveryEventInOrderOnceItIsBack(String mode) throws Exception {
        AtomicBoolean down = new AtomicBoolean(true);
        try (TestServer server = start(mode); StandInSubscriber subscriber = downWhile(down)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            int events = 2_000;
            publish(server, "reading", 0, events);
            Await.until("POSTs fail while the subscriber is down", WAIT,
                    () -> server.metric("eventhandler_push_failed_attempts_total") >= 2);
            down.set(false);
            Await.until("every event at the subscriber", WAIT, () -> subscriber.bodies().size() >= events);
            assertEquals(payloads(0, events), subscriber.payloads());
            assertEquals(0, server.metric("eventhandler_push_dropped_events_total{reason=\"retries-exhausted\"}"));
            assertEquals(0, server.metric("eventhandler_push_dropped_events_total{reason=\"queue-full\"}"));
            server.publish("reading", "live");
            subscriber.awaitEvents(events + 1);
            assertEquals("live", subscriber.payloads().get(events));
        }
    }

    /**
     * A publisher that outruns a healthy subscriber, with room in memory for a few events: what does not fit is
     * left to the log and read a page at a time within the budget, and nothing is dropped.
     */
    @Test
    void whatMemoryHasNoRoomForIsReadFromTheLogLater() throws Exception {
        try (TestServer server = start("async", "push.total-max-bytes", "32768");
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            int events = 3_000;
            publish(server, "reading", 0, events);
            Await.until("every event at the subscriber", WAIT, () -> subscriber.bodies().size() >= events);
            assertEquals(payloads(0, events), subscriber.payloads());
            assertTrue(server.metric("eventhandler_push_queued_bytes") <= 16_384, "the push queues' half");
            assertEquals(0, server.metric("eventhandler_push_failed_attempts_total"));
        }
    }

    /**
     * An event larger than the subscription's share of the queues (here over a quarter of push.total-max-bytes)
     * is refused from memory while the cursor holds nothing: it is read from the log, alone, and delivered, and
     * the cursor goes on.
     */
    @Test
    void anEventLargerThanTheSubscriptionsShareIsDeliveredFromTheLog() throws Exception {
        try (TestServer server = start("async", "push.total-max-bytes", "32768");
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            server.publish("reading", "small1");
            subscriber.awaitEvents(1);
            String large = "x".repeat(10_000);
            server.publish("reading", large);
            server.publish("reading", "small2");
            Await.until("every event at the subscriber", WAIT, () -> subscriber.bodies().size() >= 3);
            assertEquals(List.of("small1", large, "small2"), subscriber.payloads());
            Await.until("the queues hold nothing", WAIT, () -> server.metric("eventhandler_push_queued_bytes") == 0);
        }
    }

    /**
     * The budget refuses a live event to a cursor that holds nothing and sends nothing (another subscription's
     * queue holds the rest of the pressure line): no POST's end will read the log for it, so the refusal does.
     */
    @Test
    void aLiveEventRefusedWhileTheCursorHoldsNothingIsReadFromTheLog() throws Exception {
        try (StandInSubscriber hanging = StandInSubscriber.hanging();
             StandInSubscriber subscriber = StandInSubscriber.healthy();
             TestServer server = stuckAndConsumer(hanging, subscriber)) {
            for (int i = 0; i < 7; i++) {
                server.publish("bulk", "b".repeat(1_000));
            }
            // Over a quarter of push.total-max-bytes with the next event, which is over this share (a quarter
            // of it divided by two subscriptions).
            Await.until("the hanging subscriber's queue holds its share", WAIT,
                    () -> server.metric("eventhandler_push_queued_bytes") > 4_000);
            String refused = "y".repeat(5_000);
            server.publish("reading", refused);
            server.publish("reading", "after");
            hanging.release();
            Await.until("both events at the subscriber", WAIT, () -> subscriber.bodies().size() >= 2);
            assertEquals(List.of(refused, "after"), subscriber.payloads());
        }
    }

    /**
     * An event that does not fit beside what another subscription holds, even past the share, waits in line (it
     * stays in the log) rather than being taken over the queues' half, and is delivered once the other's POST ends.
     */
    @Test
    void anEventWithoutRoomWaitsInLineAndIsDeliveredOnceThereIsRoom() throws Exception {
        try (StandInSubscriber hanging = StandInSubscriber.hanging();
             StandInSubscriber subscriber = StandInSubscriber.healthy();
             TestServer server = stuckAndConsumer(hanging, subscriber)) {
            String waiting = waitInLine(server, hanging);
            assertEquals(List.of(), subscriber.payloads());
            assertTrue(server.metric("eventhandler_push_queued_bytes") <= 16_384, "the push queues' half");
            hanging.release();
            subscriber.awaitEvents(1);
            assertEquals(List.of(waiting), subscriber.payloads());
            assertEquals(0, server.metric("eventhandler_push_waiting_for_room"));
        }
    }

    /**
     * A dead letter redelivered while its cursor waits in the budget's line for a page's first event is sent at once,
     * not only once the wait ends: here that wait ends only when another subscriber's hanging POST does.
     */
    @Test
    void aRedeliveryWhileTheCursorWaitsInLineIsSentAtOnce() throws Exception {
        AtomicBoolean refuses = new AtomicBoolean(true);
        String letters = "/eventhandler/mgmt/subscriptions/2/dead-letters";
        try (StandInSubscriber hanging = StandInSubscriber.hanging();
             StandInSubscriber subscriber = StandInSubscriber.answeringPayloads(
                     payload -> payload.equals("poison") && refuses.get() ? 400 : 200);
             TestServer server = stuckAndConsumer(hanging, subscriber)) {
            server.publish("reading", "poison");
            Await.until("the refused event is listed", WAIT, () -> StandInSubscriber.read(
                    server.get(letters).body()).get("count").asInt() == 1);
            String waiting = waitInLine(server, hanging);
            refuses.set(false);
            Reply redelivery = server.post(letters + "/redeliver", "");
            assertEquals(200, redelivery.statusCode(), redelivery.body());
            subscriber.awaitEvents(1);
            assertEquals(List.of("poison"), subscriber.payloads());
            assertEquals(1, server.metric("eventhandler_push_waiting_for_room"), "sent while the cursor waited");
            hanging.release();
            subscriber.awaitEvents(2);
            assertEquals(List.of("poison", waiting), subscriber.payloads());
        }
    }

    @Test
    void theCursorOutlastsARestart() throws Exception {
        AtomicBoolean down = new AtomicBoolean(true);
        try (StandInSubscriber subscriber = downWhile(down)) {
            try (TestServer server = start("async")) {
                PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
                down.set(false);
                server.publish("reading", "e0");
                subscriber.awaitEvents(1);
                down.set(true);
                publish(server, "reading", 1, 500);
                Await.until("a POST failed", WAIT, () -> server.metric("eventhandler_push_failed_attempts_total") >= 1);
            }
            try (TestServer server = start("async")) {
                down.set(false);
                Await.until("every event at the subscriber", WAIT, () -> subscriber.bodies().size() >= 500);
                assertEquals(payloads(0, 500), subscriber.payloads(), "none lost, none twice, in order");
                server.publish("reading", "e500");
                subscriber.awaitEvents(501);
            }
            try (TestServer server = start("async")) {
                server.publish("reading", "e501");
                subscriber.awaitEvents(502);
                assertEquals(payloads(0, 502), subscriber.payloads(), "a clean stop saves the cursor exactly");
            }
        }
    }

    @Test
    void eventsRetentionRemovedBeforeTheSubscriberGotThemAreCountedAndSaidOnce() throws Exception {
        ch.qos.logback.classic.Logger cursorLog = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(LogCursors.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        cursorLog.addAppender(lines);
        AtomicBoolean down = new AtomicBoolean(true);
        try (TestServer server = start("async", "store.retention-events", "100", "store.retention-check-seconds", "1");
             StandInSubscriber subscriber = downWhile(down)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            publish(server, "reading", 0, 300);
            Await.until("retention deleted the oldest events", WAIT, () -> StandInSubscriber.read(
                    server.get("/eventhandler/mgmt/health").body()).get("store").get("deletedUpTo").asLong() >= 200);
            down.set(false);
            Await.until("the events the log still holds at the subscriber", WAIT,
                    () -> subscriber.payloads().contains("e299"));
            List<String> got = subscriber.payloads();
            // The first event was in flight, and is delivered; retention took a run after it.
            assertEquals("e0", got.get(0));
            assertEquals(payloads(300 - got.size() + 1, 300), got.subList(1, got.size()));
            double skipped = server.metric("eventhandler_push_cursor_skipped_ids_total{subscription=\"1\"}");
            assertEquals(300 - got.size(), skipped, "the ids passed that the log no longer held: " + got.size());
        } finally {
            cursorLog.detachAppender(lines);
        }
        List<ILoggingEvent> warnings = lines.list.stream().filter(line -> line.getLevel() == Level.WARN).toList();
        assertEquals(1, warnings.size(), "one line for the loss: " + warnings);
        assertTrue(warnings.get(0).getFormattedMessage().contains("no longer held ids 2-"),
                warnings.get(0).getFormattedMessage());
    }

    @Test
    void aNewSubscriptionStartsAtTheNewestEventAndItsCursorGoesWithIt() throws Exception {
        try (StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            try (TestServer server = start("async")) {
                server.publish("reading", "before");
                PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
                server.publish("reading", "after");
                subscriber.awaitEvents(1);
                assertEquals(200, server.send(new HttpDelete(server.uri("/eventhandler/mgmt/subscriptions/1")))
                        .statusCode());
                server.publish("reading", "unsubscribed");
            }
            try (TestServer server = start("async")) {
                // Given the deleted one's id again: it starts at the newest event, not at the old cursor.
                PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
                server.publish("reading", "new");
                subscriber.awaitEvents(2);
                assertEquals(List.of("after", "new"), subscriber.payloads());
            }
        }
    }

    @Test
    void theQueueSettingsAreRefusedWhereACursorReplacesThemNamingIt() {
        ConfigException refused = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("push.queue-capacity", "5")));
        assertTrue(refused.getMessage().contains("push.queue-capacity is set, but it cannot take effect: store.mode is"
                + " async: a push subscription is delivered from its own cursor in the event log"), refused.getMessage());
        assertTrue(refused.getMessage().contains("push.total-max-bytes"), refused.getMessage());
        ConfigLoader.withOverrides(Map.of("store.mode", "off", "push.queue-capacity", "5"));
        for (String key : List.of("push.queue-capacity", "push.max-retries")) {
            ConfigException inCluster = assertThrows(ConfigException.class, () -> ConfigLoader.withOverrides(Map.of(
                    "cluster.enabled", "true", "cluster.nats-urls", "nats://127.0.0.1:4222", key, "5")));
            assertTrue(inCluster.getMessage().contains(key + " is set, but it cannot take effect: cluster.enabled is"
                    + " true: a push subscription is delivered from its own cursor in the cluster's stream"),
                    inCluster.getMessage());
        }
    }

    /** Refused like push.queue-capacity, but for configurations (and tests) that set it with a store: said. */
    @Test
    void maxRetriesWithAStoreIsSaidToHaveNoEffect() {
        ch.qos.logback.classic.Logger configLog = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
                "eu.arrowhead.eventhandler.config.IneffectiveSettings");
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        configLog.addAppender(lines);
        try {
            ConfigLoader.withOverrides(Map.of("push.max-retries", "0"));
            ConfigLoader.withOverrides(Map.of("store.mode", "off", "push.max-retries", "0"));
        } finally {
            configLog.detachAppender(lines);
        }
        assertEquals(1, lines.list.size(), "a line for the store, none without one: " + lines.list);
        assertTrue(lines.list.get(0).getFormattedMessage().startsWith("push.max-retries is set, but it has no effect"
                + " with an event store"), lines.list.get(0).getFormattedMessage());
    }
}

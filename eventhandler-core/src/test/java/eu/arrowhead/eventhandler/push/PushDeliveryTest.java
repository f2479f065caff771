package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Push delivery to real local HTTP servers standing in for Arrowhead 4.x subscribers. */
class PushDeliveryTest {

    static TestServer server(String... keyValues) {
        List<String> settings = new ArrayList<>(List.of("push.retry-initial-millis", "20",
                "push.retry-max-millis", "100", "push.sender-threads", "2"));
        settings.addAll(List.of(keyValues));
        return TestServer.start(settings.toArray(String[]::new));
    }

    static void subscribe(TestServer server, String json) {
        Reply reply = server.post("/eventhandler/subscribe", json);
        assertEquals(200, reply.statusCode(), reply.body());
    }

    static void publish(TestServer server, String json) {
        Reply reply = server.post("/eventhandler/publish", json);
        assertEquals(200, reply.statusCode(), reply.body());
    }

    @Test
    void postsTheEventDtoToTheNotifyUriInPublishOrder() throws Exception {
        try (TestServer server = server(); StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            subscribe(server, subscriber.subscription("consumer", "temperature", ""));
            String timeStamp = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            publish(server, "{\"eventType\":\"temperature\",\"payload\":\"21.5\",\"metaData\":{\"unit\":\"C\"},"
                    + "\"source\":{\"systemName\":\"sensor\"},\"timeStamp\":\"" + timeStamp + "\"}");
            for (int i = 0; i < 49; i++) {
                server.publish("temperature", "p" + i);
            }
            subscriber.awaitEvents(50);

            JsonNode first = StandInSubscriber.read(subscriber.bodies().get(0));
            assertEquals(Set.of("eventType", "payload", "metaData", "timeStamp"), fieldNames(first));
            assertEquals("temperature", first.get("eventType").asText());
            assertEquals("21.5", first.get("payload").asText());
            assertEquals("C", first.get("metaData").get("unit").asText());
            assertEquals(timeStamp, first.get("timeStamp").asText());
            assertEquals(IntStream.range(0, 49).mapToObj(i -> "p" + i).toList(),
                    subscriber.payloads().subList(1, 50));
            Await.until("the delivered metric", Duration.ofSeconds(5),
                    () -> server.metric("eventhandler_push_delivered_events_total") == 50);
        }
    }

    @Test
    void eventTypesMatchCaseInsensitivelyAndAreDeliveredAsPublished() throws Exception {
        try (TestServer server = server(); StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            subscribe(server, subscriber.subscription("consumer", "Machine.State", ""));
            server.publish("MACHINE.state", "running");
            subscriber.awaitEvents(1);
            assertEquals("MACHINE.state", StandInSubscriber.read(subscriber.bodies().get(0)).get("eventType").asText());
        }
    }

    @Test
    void filtersBySourceMetadataAndTimeStampWindow() throws Exception {
        try (TestServer server = server();
             StandInSubscriber bySource = StandInSubscriber.healthy();
             StandInSubscriber byMeta = StandInSubscriber.healthy();
             StandInSubscriber metaIgnored = StandInSubscriber.healthy();
             StandInSubscriber fromLater = StandInSubscriber.healthy();
             StandInSubscriber untilEarlier = StandInSubscriber.healthy();
             StandInSubscriber everything = StandInSubscriber.healthy()) {
            Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            subscribe(server, bySource.subscription("a", "reading",
                    "\"sources\":[{\"systemName\":\"Sensor-1\",\"address\":\"10.0.0.1\",\"port\":1}]"));
            subscribe(server, byMeta.subscription("b", "reading",
                    "\"matchMetaData\":true,\"filterMetaData\":{\"unit\":\"celsius\"}"));
            subscribe(server, metaIgnored.subscription("c", "reading",
                    "\"matchMetaData\":false,\"filterMetaData\":{\"unit\":\"kelvin\"}"));
            subscribe(server, fromLater.subscription("d", "reading",
                    "\"startDate\":\"" + now.plusSeconds(60) + "\""));
            subscribe(server, untilEarlier.subscription("e", "reading",
                    "\"endDate\":\"" + now.minusSeconds(60) + "\""));
            subscribe(server, everything.subscription("f", "reading", ""));

            publish(server, event("from-sensor-1", "sensor-1", "CELSIUS", now));
            publish(server, event("from-sensor-2", "sensor-2", "fahrenheit", now));
            publish(server, event("early", "sensor-2", "fahrenheit", now.minusSeconds(90)));
            publish(server, event("late", "sensor-2", "fahrenheit", now.plusSeconds(90)));
            // Markers that pass the filters, last in each queue: once a subscriber has its markers, it has
            // had every event before them.
            publish(server, event("marker-late", "sensor-1", "Celsius", now.plusSeconds(100)));
            publish(server, event("marker-early", "sensor-1", "Celsius", now.minusSeconds(100)));
            everything.awaitEvents(6);
            metaIgnored.awaitEvents(6);
            bySource.awaitEvents(3);
            byMeta.awaitEvents(3);
            fromLater.awaitEvents(2);
            untilEarlier.awaitEvents(2);
            assertEquals(List.of("from-sensor-1", "marker-late", "marker-early"), bySource.payloads());
            assertEquals(List.of("from-sensor-1", "marker-late", "marker-early"), byMeta.payloads());
            assertEquals(List.of("late", "marker-late"), fromLater.payloads());
            assertEquals(List.of("early", "marker-early"), untilEarlier.payloads());
            assertEquals(everything.payloads(), metaIgnored.payloads());
        }
    }

    private static String event(String payload, String source, String unit, Instant timeStamp) {
        return "{\"eventType\":\"reading\",\"payload\":\"" + payload + "\",\"metaData\":{\"unit\":\"" + unit
                + "\"},\"source\":{\"systemName\":\"" + source + "\"},\"timeStamp\":\"" + timeStamp + "\"}";
    }

    @Test
    void aHangingOrDeadSubscriberDelaysNoOther() throws Exception {
        try (TestServer server = server("push.response-timeout-seconds", "20");
             StandInSubscriber hanging = StandInSubscriber.hanging();
             StandInSubscriber healthy = StandInSubscriber.healthy()) {
            subscribe(server, hanging.subscription("stuck", "alarm", ""));
            subscribe(server, "{\"eventType\":\"alarm\",\"subscriberSystem\":{\"systemName\":\"gone\","
                    + "\"address\":\"127.0.0.1\",\"port\":" + TestServer.freePort() + "},\"notifyUri\":\"/x\"}");
            subscribe(server, healthy.subscription("fine", "alarm", ""));
            long started = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                server.publish("alarm", "a" + i);
            }
            healthy.awaitEvents(20);
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "the healthy subscriber took " + took);
            // The healthy subscriber can have all 20 before the first POST reaches the hanging one (the two
            // sender threads take the subscribers in any order).
            Await.until("the first POST at the hanging subscriber", Duration.ofSeconds(5),
                    () -> hanging.requests() >= 1);
            assertEquals(1, hanging.requests(), "one POST in flight to the hanging subscriber at a time");
            hanging.release();
            hanging.awaitEvents(20);
            assertEquals(IntStream.range(0, 20).mapToObj(i -> "a" + i).toList(), hanging.payloads());
        }
    }

    /** The first two POSTs fail: with enough retries the first event arrives late, else it is given up. */
    @ParameterizedTest
    @CsvSource({"3, 'first,second', 0", "1, 'second', 1"})
    void retriesAFailedPostThenGoesOnInOrder(int maxRetries, String received, int givenUp) throws Exception {
        try (TestServer server = server("push.max-retries", String.valueOf(maxRetries));
             StandInSubscriber flaky = StandInSubscriber.answering(request -> request <= 2 ? 503 : 200)) {
            subscribe(server, flaky.subscription("flaky", "order", ""));
            server.publish("order", "first");
            server.publish("order", "second");
            List<String> expected = List.of(received.split(","));
            flaky.awaitEvents(expected.size());
            assertEquals(expected, flaky.payloads());
            assertEquals(2 + expected.size(), flaky.requests());
            assertEquals(2, server.metric("eventhandler_push_failed_attempts_total"));
            assertEquals(givenUp, server.metric("eventhandler_push_dropped_events_total{reason=\"retries-exhausted\"}"));
        }
    }

    @Test
    void aFullQueueDropsTheOldestEvents() throws Exception {
        try (TestServer server = server("push.queue-capacity", "2", "push.response-timeout-seconds", "20");
             StandInSubscriber hanging = StandInSubscriber.hanging()) {
            subscribe(server, hanging.subscription("slow", "tick", ""));
            server.publish("tick", "t0");
            Await.until("the first POST in flight", Duration.ofSeconds(5), () -> hanging.requests() == 1);
            for (int i = 1; i < 10; i++) {
                server.publish("tick", "t" + i);
            }
            assertEquals(7, server.metric("eventhandler_push_dropped_events_total{reason=\"queue-full\"}"));
            assertEquals(2, server.metric("eventhandler_push_queued_events"));
            hanging.release();
            hanging.awaitEvents(3);
            assertEquals(List.of("t0", "t8", "t9"), hanging.payloads());
        }
    }

    @Test
    void shutdownWaitsForQueuesAtMostTheGracePeriod() throws Exception {
        try (StandInSubscriber hanging = StandInSubscriber.hanging();
             StandInSubscriber healthy = StandInSubscriber.healthy()) {
            TestServer server = server("push.response-timeout-seconds", "30");
            subscribe(server, hanging.subscription("stuck", "tick", ""));
            subscribe(server, healthy.subscription("fine", "tick", ""));
            server.publish("tick", "t0");
            Await.until("the POST to the hanging subscriber", Duration.ofSeconds(5), () -> hanging.requests() == 1);
            long started = System.nanoTime();
            assertFalse(server.server().shutdown(), "a subscriber still waiting is not a clean stop");
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            // server.shutdown-grace-seconds is 2 in tests.
            assertTrue(took.compareTo(Duration.ofSeconds(6)) < 0, "shutdown took " + took);
            assertEquals(List.of("t0"), healthy.payloads());
            server.close();
        }
    }

    @Test
    void subscribingAgainReplacesAndUnsubscribingStops() throws Exception {
        try (TestServer server = server();
             StandInSubscriber first = StandInSubscriber.healthy();
             StandInSubscriber moved = StandInSubscriber.healthy();
             StandInSubscriber witness = StandInSubscriber.healthy()) {
            subscribe(server, first.subscription("consumer", "door", ""));
            subscribe(server, first.subscription("consumer", "door", ""));
            subscribe(server, moved.subscription("CONSUMER", "DOOR", ""));
            subscribe(server, witness.subscription("witness", "door", ""));
            assertEquals(2, StandInSubscriber.read(server.get("/eventhandler/mgmt/subscriptions").body())
                    .get("count").asInt());
            server.publish("door", "open");
            moved.awaitEvents(1);
            witness.awaitEvents(1);

            Reply gone = server.send(new HttpDelete(server.uri(
                    "/eventhandler/unsubscribe?event_type=Door&system_name=consumer&address=127.0.0.1&port="
                            + moved.port())));
            assertEquals(200, gone.statusCode(), gone.body());
            Reply nothing = server.send(new HttpDelete(server.uri(
                    "/eventhandler/unsubscribe?event_type=door&system_name=nobody&address=127.0.0.1&port=1")));
            assertEquals(200, nothing.statusCode(), nothing.body());
            // The hub itself no longer holds the unsubscribed one: only the witness is left on the topic.
            assertEquals(1, server.topic("door").orElseThrow().subscribers());
            server.publish("door", "closed");
            witness.awaitEvents(2);
            assertEquals(List.of("open"), moved.payloads());
            assertTrue(first.bodies().isEmpty());
            assertFalse(server.get("/eventhandler/mgmt/subscriptions").body().contains("consumer"));
        }
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new java.util.HashSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}

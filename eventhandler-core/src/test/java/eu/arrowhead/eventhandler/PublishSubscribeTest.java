package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import eu.arrowhead.eventhandler.testing.Reply;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PublishSubscribeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void echoAnswersGotIt() {
        Reply response = server.get("/eventhandler/echo");
        assertEquals(200, response.statusCode());
        assertEquals("Got it!", response.body());
    }

    @Test
    void publishedEventArrivesAsAnExactSseFrame() throws Exception {
        String timeStamp = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        try (SseStream stream = server.subscribe("?eventType=exact.frame")) {
            assertEquals("text/event-stream", stream.response().headers().firstValue("Content-Type").orElse("")
                    .replaceAll(";.*", ""));
            Reply published = server.post("/eventhandler/publish", """
                    {"eventType":"Exact.Frame","payload":"{\\"t\\":21.5}","metaData":{"unit":"celsius"},
                     "source":{"systemName":"sensor-1","address":"10.0.0.5","port":8080},"timeStamp":"%s"}"""
                    .formatted(timeStamp));
            assertEquals(200, published.statusCode(), published.body());
            long id = JSON.readTree(published.body()).get("id").asLong();

            Frame frame = stream.nextEvent(WAIT);
            assertEquals(Long.toString(id), frame.id());
            assertEquals("Exact.Frame", frame.event());
            assertEquals("{\"id\":" + id + ",\"eventType\":\"Exact.Frame\",\"payload\":\"{\\\"t\\\":21.5}\","
                    + "\"metaData\":{\"unit\":\"celsius\"},\"source\":{\"systemName\":\"sensor-1\","
                    + "\"address\":\"10.0.0.5\",\"port\":8080},\"timeStamp\":\"" + timeStamp + "\"}", frame.data());
        }
    }

    @Test
    void missingTimeStampIsSetOnArrival() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=stamped")) {
            Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            server.publish("stamped", "x");
            JsonNode data = JSON.readTree(stream.nextEvent(WAIT).data());
            Instant stamped = Instant.parse(data.get("timeStamp").asText());
            assertTrue(!stamped.isBefore(before) && !stamped.isAfter(Instant.now()), stamped.toString());
            assertNull(data.get("source"));
            assertNull(data.get("metaData"));
        }
    }

    @Test
    void batchIsPublishedWithConsecutiveIdsInOrder() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=batch.a&eventType=batch.b")) {
            Reply response = server.post("/eventhandler/publish/batch", """
                    [{"eventType":"batch.a","payload":"1"},{"eventType":"batch.b","payload":"2"},
                     {"eventType":"batch.a","payload":"3"}]""");
            assertEquals(200, response.statusCode(), response.body());
            JsonNode ids = JSON.readTree(response.body()).get("ids");
            assertEquals(3, ids.size());
            long first = ids.get(0).asLong();
            assertEquals(first + 1, ids.get(1).asLong());
            assertEquals(first + 2, ids.get(2).asLong());
            List<Frame> frames = stream.events(3, WAIT);
            for (int i = 0; i < 3; i++) {
                assertEquals(Long.toString(first + i), frames.get(i).id());
                assertEquals(Integer.toString(i + 1), JSON.readTree(frames.get(i).data()).get("payload").asText());
            }
        }
    }

    @Test
    void eventTypesMatchCaseInsensitivelyAndOthersAreNotDelivered() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=CASE.topic")) {
            server.publish("other.topic", "no");
            long id = server.publish("case.TOPIC", "yes");
            Frame frame = stream.nextEvent(WAIT);
            assertEquals(Long.toString(id), frame.id());
            assertEquals("case.TOPIC", frame.event());
        }
    }

    @Test
    void sourceFilterKeepsOnlyNamedSources() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=by.source&source=Sensor-2&source=sensor-3")) {
            publishFrom("by.source", "sensor-1", "a");
            publishFrom("by.source", "sensor-2", "b");
            server.publish("by.source", "no source");
            publishFrom("by.source", "SENSOR-3", "c");
            List<Frame> frames = stream.events(2, WAIT);
            assertEquals("b", JSON.readTree(frames.get(0).data()).get("payload").asText());
            assertEquals("c", JSON.readTree(frames.get(1).data()).get("payload").asText());
            long marker = publishFrom("by.source", "sensor-2", "end");
            assertEquals(Long.toString(marker), stream.nextEvent(WAIT).id());
        }
    }

    @Test
    void metadataFilterIsASubsetMatchWithCaseInsensitiveValues() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=by.meta&meta.unit=Celsius&meta.room=1")) {
            publishMeta("by.meta", "{\"unit\":\"celsius\"}", "missing room");
            publishMeta("by.meta", "{\"unit\":\"kelvin\",\"room\":\"1\"}", "wrong unit");
            publishMeta("by.meta", "{\"unit\":\"CELSIUS\",\"room\":\"1\",\"floor\":\"2\"}", "match");
            server.publish("by.meta", "no metadata");
            long marker = publishMeta("by.meta", "{\"unit\":\"celsius\",\"room\":\"1\"}", "match 2");
            List<Frame> frames = stream.events(2, WAIT);
            assertEquals("match", JSON.readTree(frames.get(0).data()).get("payload").asText());
            assertEquals(Long.toString(marker), frames.get(1).id());
        }
    }

    @Test
    void aNewStreamOpensWithRetryAndItsResumePointAsANamedEventWithData() throws Exception {
        long before = server.publish("opening.id", "before");
        try (RawSubscriber raw = RawSubscriber.open(server.port(), "?eventType=opening.id", 0)) {
            // In one piece (one chunk): a client never sees the comment without the resume point.
            raw.awaitText(":ok\nretry: 1000\nid: " + before + "\nevent: eventhandler.open\ndata: {\"lastEventId\":"
                    + before + "}\n\n", 5_000);
        }
        long missed = server.publish("opening.id", "while away");
        try (SseStream stream = server.subscribe("?eventType=opening.id", "Last-Event-ID", Long.toString(before))) {
            assertEquals(Long.toString(missed), stream.nextEvent(WAIT).id(), "resumed from the opening id");
        }
    }

    @Test
    void aResumedStreamOpensWithRetryAndNoId() throws Exception {
        long before = server.publish("opening.resumed", "before");
        try (RawSubscriber raw = RawSubscriber.open(server.port(), "?eventType=opening.resumed&lastEventId=" + before, 0)) {
            raw.awaitText(":ok\nretry: 1000\n\n", 5_000);
            long next = server.publish("opening.resumed", "next");
            raw.awaitText("id: " + next + "\n", 5_000);
            String body = raw.received().substring(raw.received().indexOf(":ok"));
            assertTrue(!body.contains("eventhandler.open") && body.indexOf("id: ") == body.indexOf("id: " + next + "\n"),
                    "no id before the first event: " + body);
        }
    }

    @Test
    void filtersMatchNonAsciiValues() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=utf8&source=Sens%C3%B6r-1&meta.gr%C3%B6%C3%9Fe=Gro%C3%9F")) {
            publishBody("{\"eventType\":\"utf8\",\"payload\":\"no\",\"source\":{\"systemName\":\"sensor-1\"},"
                    + "\"metaData\":{\"gr\u00f6\u00dfe\":\"gro\u00df\"}}");
            long id = publishBody("{\"eventType\":\"utf8\",\"payload\":\"yes\",\"source\":{\"systemName\":\"sens\u00f6r-1\"},"
                    + "\"metaData\":{\"gr\u00f6\u00dfe\":\"GRO\u00df\"}}");
            assertEquals(Long.toString(id), stream.nextEvent(WAIT).id());
        }
    }

    @Test
    void topicsListSubscribersAndCounters() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=counted")) {
            server.publish("counted", "1");
            server.publish("counted", "2");
            stream.events(2, WAIT);
            assertEquals(new TopicStats("counted", 1, 2, 2, 0), server.topic("counted").orElseThrow());
        }
    }

    @Test
    void metricsAreInPrometheusTextFormat() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=metered")) {
            server.publish("metered", "1");
            stream.nextEvent(WAIT);
            Reply response = server.get("/metrics");
            assertEquals(200, response.statusCode());
            assertTrue(response.header("Content-Type").startsWith("text/plain"));
            String body = response.body();
            assertTrue(body.contains("eventhandler_events_published_total{topic=\"metered\"} 1.0"), body);
            assertTrue(body.contains("eventhandler_events_delivered_total{topic=\"metered\"} 1.0"), body);
            assertTrue(body.contains("eventhandler_publish_handling_seconds_count"), body);
            assertTrue(body.contains("eventhandler_subscribers "), body);
            assertTrue(body.contains("jvm_threads_current"), body);
        }
    }

    @Test
    void heartbeatCommentsKeepAnIdleStreamAlive() throws Exception {
        try (TestServer fast = TestServer.start("sse.heartbeat-seconds", "1");
             SseStream stream = fast.subscribe("?eventType=quiet")) {
            Frame frame = stream.next(Duration.ofSeconds(5));
            assertTrue(frame != null && frame.isComment(), "expected a heartbeat, got " + frame);
        }
    }

    private static long publishFrom(String eventType, String source, String payload) throws Exception {
        return publishBody("{\"eventType\":\"" + eventType + "\",\"payload\":\"" + payload
                + "\",\"source\":{\"systemName\":\"" + source + "\"}}");
    }

    private static long publishMeta(String eventType, String metaData, String payload) throws Exception {
        return publishBody("{\"eventType\":\"" + eventType + "\",\"payload\":\"" + payload
                + "\",\"metaData\":" + metaData + "}");
    }

    private static long publishBody(String body) throws Exception {
        Reply response = server.post("/eventhandler/publish", body);
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body()).get("id").asLong();
    }
}

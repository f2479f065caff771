package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Publishes with an {@code Idempotency-Key}: a repeat gets the first answer and publishes nothing. */
class IdempotencyTest {
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

    private static Reply post(String path, String body, String key) {
        return server.postKeyed(path, body, key);
    }

    @Test
    void aRepeatWithTheSameKeyGetsTheSameIdAndIsDeliveredOnce() throws Exception {
        try (SseStream stream = server.subscribe("?eventType=idem.once")) {
            String event = "{\"eventType\":\"idem.once\",\"payload\":\"first\"}";
            Reply first = post("/eventhandler/publish", event, "key-once-1");
            Reply repeat = post("/eventhandler/publish", event, "key-once-1");
            assertEquals(200, first.statusCode(), first.body());
            assertEquals(200, repeat.statusCode(), repeat.body());
            assertEquals(first.body(), repeat.body());
            long id = JSON.readTree(first.body()).get("id").asLong();
            long marker = server.publish("idem.once", "marker");

            assertEquals(Long.toString(id), stream.nextEvent(WAIT).id());
            assertEquals(Long.toString(marker), stream.nextEvent(WAIT).id(), "the repeat was delivered again");
        }
    }

    @Test
    void aRepeatedBatchGetsTheSameIds() {
        String batch = "[{\"eventType\":\"idem.batch\",\"payload\":\"a\"},{\"eventType\":\"idem.batch\",\"payload\":\"b\"}]";
        Reply first = post("/eventhandler/publish/batch", batch, "key-batch-1");
        Reply repeat = post("/eventhandler/publish/batch", batch, "key-batch-1");
        assertEquals(200, first.statusCode(), first.body());
        assertEquals(first.body(), repeat.body());
        assertEquals(2, server.topic("idem.batch").orElseThrow().published());
    }

    @Test
    void theSameKeyForAnotherRequestIsRefused() throws Exception {
        assertEquals(200, post("/eventhandler/publish", "{\"eventType\":\"idem.other\",\"payload\":\"a\"}",
                "key-other-1").statusCode());
        Reply other = post("/eventhandler/publish", "{\"eventType\":\"idem.other\",\"payload\":\"b\"}", "key-other-1");

        assertEquals(422, other.statusCode(), other.body());
        JsonNode error = JSON.readTree(other.body());
        assertEquals("BAD_PAYLOAD", error.get("exceptionType").asText());
        assertTrue(error.get("errorMessage").asText().contains("key-other-1"), other.body());
        assertEquals(1, server.topic("idem.other").orElseThrow().published());
    }

    @Test
    void aKeyThatIsNotVisibleAsciiOrTooLongIsRefused() throws Exception {
        String event = "{\"eventType\":\"idem.bad\",\"payload\":\"a\"}";
        for (String key : new String[] {"has space", "x".repeat(129), ""}) {
            Reply refused = post("/eventhandler/publish", event, key);
            assertEquals(400, refused.statusCode(), key + ": " + refused.body());
            assertEquals("INVALID_PARAMETER", JSON.readTree(refused.body()).get("exceptionType").asText());
        }
        assertEquals(200, post("/eventhandler/publish", event, "x".repeat(128)).statusCode());
    }

    @Test
    void theKeysHeldAreInTheMetrics() {
        assertEquals(200, post("/eventhandler/publish", "{\"eventType\":\"idem.metric\",\"payload\":\"a\"}",
                "key-metric-1").statusCode());
        assertTrue(server.metric("eventhandler_idempotency_keys") >= 1);
        assertEquals(0, server.metric("eventhandler_idempotency_keys_forgotten_early_total"));
    }
}

package eu.arrowhead.eventhandler.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.api.PushedEvent;
import eu.arrowhead.eventhandler.api.SystemRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The event's JSON in its forms: with id 0, with its id in a frame or in the log, back from the log, and as a
 * push subscriber's 4.x {@code EventDTO}.
 */
class EventEncodingTest {
    private static final byte[] ENCODED = EventEncoding.withIdZero("Temp.Reading", "{\"t\":21.5} ünï",
            Map.of("unit", "°C"), new SystemRequest("sensor", "127.0.0.1", 8443, null, null), "2026-11-21T10:00:00Z");

    @Test
    void theIdZeroFormStartsWithTheIdAndHoldsEveryField() {
        assertEquals("{\"id\":0,\"eventType\":\"Temp.Reading\",\"payload\":\"{\\\"t\\\":21.5} ünï\","
                        + "\"metaData\":{\"unit\":\"°C\"},\"source\":{\"systemName\":\"sensor\",\"address\":"
                        + "\"127.0.0.1\",\"port\":8443},\"timeStamp\":\"2026-11-21T10:00:00Z\"}",
                new String(ENCODED, StandardCharsets.UTF_8));
    }

    @Test
    void theIdIsWrittenInPlaceOfZeroAlikeInAFrameAndInTheLog() {
        for (long id : new long[] {1, 42, Long.MAX_VALUE}) {
            String withId = EventEncoding.withId(id, ENCODED);
            assertEquals(new String(ENCODED, StandardCharsets.UTF_8).replaceFirst("\"id\":0,", "\"id\":" + id + ","),
                    withId);
            byte[] idText = Long.toString(id).getBytes(StandardCharsets.US_ASCII);
            byte[] frame = new byte[3 + EventEncoding.lengthWithId(ENCODED, idText) + 2];
            int end = EventEncoding.putWithId(ENCODED, idText, frame, 3);
            assertEquals(frame.length - 2, end);
            assertEquals(withId, new String(frame, 3, end - 3, StandardCharsets.UTF_8));
        }
    }

    @Test
    void theLoggedFormTurnsBackIntoWhatTheValidatorEncoded() throws IOException {
        String logged = EventEncoding.withId(1234, ENCODED);
        assertArrayEquals(ENCODED, EventEncoding.fromStored(logged));
        assertEquals(Map.of("unit", "°C"), EventEncoding.metaData(logged));
        assertEquals(Map.of(), EventEncoding.metaData(EventEncoding.withId(1,
                EventEncoding.withIdZero("x", "", null, null, null))));
    }

    @Test
    void thePushedFormIsWhatJacksonWritesForTheRecord() throws IOException {
        Map<String, String> metaData = new LinkedHashMap<>();
        metaData.put("z", "last \"quoted\"");
        metaData.put("a", "tab\tnew\nline \u2028 \uD83D\uDE00");
        metaData.put("", "empty key");
        SystemRequest source = new SystemRequest("src", "10.0.0.1", 1, "key", Map.of("{", "}"));
        String[] payloads = {"", "plain", "{\"json\":[1,2,{\"x\":null}]}", "<script>&'\\/</script>", "\u0001\u001f"};
        for (String payload : payloads) {
            for (Map<String, String> meta : new Map[] {null, Map.of(), metaData}) {
                for (SystemRequest from : new SystemRequest[] {null, source}) {
                    byte[] encoded = EventEncoding.withIdZero("Type.A", payload, meta, from, "2026-11-21T10:00:00.123Z");
                    byte[] expected = JsonMapper.get().writerFor(PushedEvent.class).writeValueAsBytes(
                            new PushedEvent("Type.A", payload, meta, "2026-11-21T10:00:00.123Z"));
                    assertEquals(new String(expected, StandardCharsets.UTF_8), new String(
                            EventEncoding.pushed(EventEncoding.withId(77, encoded).getBytes(StandardCharsets.UTF_8)),
                            StandardCharsets.UTF_8));
                }
            }
        }
    }
}

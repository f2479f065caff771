package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.api.SystemRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The event's JSON in its three forms: with id 0, with its id in a frame or in the log, and back. */
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
}

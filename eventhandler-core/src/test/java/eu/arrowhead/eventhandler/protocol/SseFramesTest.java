package eu.arrowhead.eventhandler.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.api.ReplayGap;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The bytes of every frame, written out: the SSE parsers the client tests run (a browser's, the npm package's,
 * Jersey's) read exactly these, so a change here is a change of the wire.
 */
class SseFramesTest {
    private static final Duration RETRY = Duration.ofMillis(2500);

    @Test
    void anEventFrameCarriesItsIdTypeAndTheJsonWithTheIdWrittenIn() {
        byte[] json = EventEncoding.withIdZero("Temp.Reading", "21.5 °C", Map.of("unit", "c"), null,
                "2026-11-21T10:00:00Z");
        byte[] frame = SseFrames.event(9_007_199_254_740_993L, "Temp.Reading", json);

        String withId = EventEncoding.withId(9_007_199_254_740_993L, json);
        assertEquals("id: 9007199254740993\nevent: Temp.Reading\ndata: " + withId + "\n\n", utf8(frame));
        assertArrayEquals(withId.getBytes(StandardCharsets.UTF_8), SseFrames.eventJson(frame));
    }

    @Test
    void aStreamOpensWithItsStartingIdAndAResumedOneWithout() {
        assertEquals(":ok\nretry: 2500\nid: 41\nevent: eventhandler.open\ndata: {\"lastEventId\":41}\n\n",
                utf8(SseFrames.opening(RETRY, 41)));
        assertEquals(":ok\nretry: 2500\n\n", utf8(SseFrames.resumedOpening(RETRY)));
    }

    @Test
    void noticesCarryTheirJson() {
        assertEquals("event: eventhandler.replay-gap\ndata: {\"requestedAfterId\":7,\"resumedAfterId\":3}\n\n",
                utf8(SseFrames.gap(new ReplayGap(7, 3))));
        assertEquals("id: 99\nevent: eventhandler.page-end\ndata: {\"lastEventId\":99}\n\n",
                utf8(SseFrames.pageEnd(99)));
    }

    @Test
    void commentsStayOneLine() {
        assertEquals(":\n\n", utf8(SseFrames.heartbeat()));
        assertEquals(": not for you; the stream ends\n\n", utf8(SseFrames.comment("not for you; the stream ends")));
        assertEquals(": a b data: x\n\n", utf8(SseFrames.comment("a\rb\ndata: x")));
    }

    @Test
    void aRefusalCarriesThe503ErrorMessage() {
        assertEquals("retry: 2500\nevent: eventhandler.unavailable\ndata: {\"errorMessage\":\"shutting down\","
                        + "\"errorCode\":503,\"exceptionType\":\"UNAVAILABLE\",\"origin\":\"/eventhandler/events\"}\n\n",
                utf8(SseFrames.refusal(RETRY, "/eventhandler/events", "shutting down")));
        assertEquals(ErrorBodies.jsonText(503, ExceptionType.UNAVAILABLE, "shutting down", "/eventhandler/events"),
                utf8(ErrorBodies.json(503, ExceptionType.UNAVAILABLE, "shutting down", "/eventhandler/events")));
    }

    private static String utf8(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}

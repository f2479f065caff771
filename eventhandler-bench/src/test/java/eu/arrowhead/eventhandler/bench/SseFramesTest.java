package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the bench reads the frames a stream carries: the server's own (openings old and new, a refusal, a
 * replay gap, the id-only frame at the end of a page) apart from events.
 */
class SseFramesTest {

    private static List<SseFrame> parse(String body) {
        List<SseFrame> frames = new ArrayList<>();
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        SseParser parser = new SseParser(frames::add);
        // Byte by byte: a frame split anywhere between reads must come out the same.
        for (int i = 0; i < bytes.length; i++) {
            parser.feed(bytes, i, 1);
        }
        return frames;
    }

    @Test
    void theOldOpeningCommentWithAnIdOpensTheStreamAndIsNoEvent() {
        List<SseFrame> frames = parse(":ok\nid: 41\n\n");
        assertEquals(1, frames.size());
        assertTrue(frames.get(0).opensStream());
        assertFalse(frames.get(0).isEvent());
        assertEquals("41", frames.get(0).id());
    }

    @Test
    void theNamedOpeningEventOpensTheStreamAndIsNoEvent() {
        SseFrame open = parse(":ok\r\nretry: 1000\r\nid: 41\r\nevent: eventhandler.open\r\n"
                + "data: {\"lastEventId\":41}\r\n\r\n").get(0);
        assertTrue(open.opensStream());
        assertFalse(open.isEvent());
        assertEquals("41", open.id());
    }

    @Test
    void aRefusalStreamIsARefusalNotAnOpening() {
        SseFrame refusal = parse("retry: 1000\nevent: eventhandler.unavailable\n"
                + "data: {\"errorCode\":503,\"exceptionType\":\"UNAVAILABLE\"}\n\n").get(0);
        assertTrue(refusal.isRefusal());
        assertFalse(refusal.opensStream());
        assertFalse(refusal.isEvent());
    }

    @Test
    void eventsGapNoticesAndThePagesEndIdAreTold() {
        List<SseFrame> frames = parse(":ok\n\nevent: eventhandler.replay-gap\n"
                + "data: {\"requestedAfterId\":3,\"resumedAfterId\":9}\n\n"
                + "id: 10\nevent: temperature\ndata: {\"payload\":\"a\"}\n\nid: 12\n\n");
        assertEquals(4, frames.size());
        assertTrue(frames.get(1).isGap());
        assertFalse(frames.get(1).isEvent());
        assertTrue(frames.get(2).isEvent());
        assertEquals("10", frames.get(2).id());
        SseFrame pageEnd = frames.get(3);
        assertFalse(pageEnd.isEvent());
        assertFalse(pageEnd.opensStream());
        assertNull(pageEnd.data());
        assertEquals("12", pageEnd.id());
    }
}

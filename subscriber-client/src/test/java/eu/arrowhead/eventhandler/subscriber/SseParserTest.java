package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.subscriber.SseParser.Frame;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The parser against the WHATWG rules, each case read both at once and one byte per read (so that a CRLF,
 * and a UTF-8 character, are split across reads).
 */
class SseParserTest {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyLineEndingEndsALine(boolean trickle) throws IOException {
        List<Frame> frames = parse("id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\rid: 3\ndata: c\n\n", trickle);
        assertEquals(List.of(event("1", "message", "a"), event("2", "message", "b"), event("3", "message", "c")), frames);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void returnsCommentsAndEventsAsTheServerWritesThem(boolean trickle) throws IOException {
        String data = "{\"payload\":\"21 °C\"}";
        List<Frame> frames = parse(":ok\n\nid: 5\nevent: temperature\ndata: " + data + "\n\n: heartbeat\n\n", trickle);
        assertEquals(List.of(Frame.comment("ok"), event("5", "temperature", data), Frame.comment(" heartbeat")), frames);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void joinsDataLinesWithLineFeeds(boolean trickle) throws IOException {
        assertEquals(List.of(event(null, "message", "one\n two\n\nthree")),
                parse("data:one\ndata:  two\ndata\ndata: three\n\n", trickle));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void skipsOneByteOrderMarkAtTheStartOnly(boolean trickle) throws IOException {
        assertEquals(List.of(event(null, "message", "x")), parse("\uFEFFdata: x\n\n\uFEFFdata: y\n\n", trickle));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aFrameWithoutDataIsNoEventButMayCarryAnId(boolean trickle) throws IOException {
        assertEquals(List.of(new Frame("1", "message", null, null), event(null, "b", "")),
                parse("event: a\n\nid: 1\n\nevent: b\ndata\n\n", trickle));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void ignoresUnknownFieldsAndIdsWithNul(boolean trickle) throws IOException {
        assertEquals(List.of(event("7", "message", "x")),
                parse("retry: 1000\nfoo: bar\nid: 7\nid: 8\u0000\ndata: x\n\n", trickle));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void keepsTheLastRetryMadeOfDigitsOnly(boolean trickle) throws IOException {
        assertEquals(-1, parser("data: x\n\n", trickle).retryMillis());
        assertEquals(1500, parser("retry: 1500\nretry: 2x\nretry:\nretry: -1\n\n", trickle).retryMillis());
        assertEquals(250, parser(":ok\nretry: 1000\n\nretry:250\nevent: a\ndata: x\n\n", trickle).retryMillis());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void readsTheServersOpeningAsACommentThenANotice(boolean trickle) throws IOException {
        assertEquals(List.of(Frame.comment("ok"), event("12", "eventhandler.open", "{\"lastEventId\":12}")),
                parse(":ok\nretry: 1000\nid: 12\nevent: eventhandler.open\ndata: {\"lastEventId\":12}\n\n", trickle));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void discardsAnEventUnfinishedAtTheEnd(boolean trickle) throws IOException {
        assertEquals(List.of(event(null, "message", "done")), parse("data: done\n\ndata: cut off\n", trickle));
    }

    private static Frame event(String id, String type, String data) {
        return new Frame(id, type, data, null);
    }

    /** A parser that has read the whole stream. */
    private static SseParser parser(String stream, boolean trickle) throws IOException {
        SseParser parser = new SseParser(input(stream, trickle));
        while (parser.next() != null) {
            // read to the end
        }
        return parser;
    }

    private static List<Frame> parse(String stream, boolean trickle) throws IOException {
        SseParser parser = new SseParser(input(stream, trickle));
        List<Frame> frames = new ArrayList<>();
        for (Frame frame = parser.next(); frame != null; frame = parser.next()) {
            frames.add(frame);
        }
        return frames;
    }

    private static InputStream input(String stream, boolean trickle) {
        ByteArrayInputStream bytes = new ByteArrayInputStream(stream.getBytes(StandardCharsets.UTF_8));
        return !trickle ? bytes : new InputStream() {
            @Override
            public int read() {
                return bytes.read();
            }

            @Override
            public int read(byte[] buffer, int offset, int length) {
                return length == 0 ? 0 : bytes.read(buffer, offset, 1);
            }
        };
    }
}

package eu.arrowhead.eventhandler.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.api.PageEnd;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.StreamOpening;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * Every Server-Sent Events frame the server writes, byte for byte: an event, a stream's opening, a replay
 * gap, a page's end, a heartbeat, a comment and a refusal. Browsers, the npm {@code eventsource} package and
 * Jersey's client parse these bytes, so they are written in this one place.
 *
 * <p>An event's frame is built once per publish and shared by all its subscribers: {@link #event} makes
 * exactly one array, the event's JSON copied into it with its id written in.
 */
public final class SseFrames {
    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "\nevent: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);

    private SseFrames() {
    }

    /**
     * An event's frame: its id, its type and its JSON with the id written in.
     *
     * @param eventType an event type that passed {@link EventTypeRule}: ASCII, no line break
     * @param json      the event's id-0 JSON ({@link EventEncoding#withIdZero})
     */
    public static byte[] event(long id, String eventType, byte[] json) {
        byte[] idText = Long.toString(id).getBytes(StandardCharsets.US_ASCII);
        byte[] type = eventType.getBytes(StandardCharsets.US_ASCII);
        byte[] frame = new byte[ID.length + idText.length + EVENT.length + type.length + DATA.length
                + EventEncoding.lengthWithId(json, idText) + 2];
        int at = put(frame, 0, ID);
        at = put(frame, at, idText);
        at = put(frame, at, EVENT);
        at = put(frame, at, type);
        at = put(frame, at, DATA);
        at = EventEncoding.putWithId(json, idText, frame, at);
        frame[at++] = '\n';
        frame[at] = '\n';
        return frame;
    }

    /** A copy of the data of an {@link #event} frame: the event's JSON with its id. */
    public static byte[] eventJson(byte[] frame) {
        int dataAt = 0;
        while (frame[dataAt] != '\n' || frame[dataAt + 1] != 'd') {
            // The event type holds no line break, so the first line starting with 'd' is the data line.
            dataAt++;
        }
        return Arrays.copyOfRange(frame, dataAt + DATA.length, frame.length - 2);
    }

    /**
     * The first frame of a new stream: {@code :ok}, the client's reconnection delay, and the
     * {@link StreamOpening} notice with the id of the last event before the stream.
     */
    public static byte[] opening(Duration retry, long lastEventId) {
        return ascii(":ok\n" + retryField(retry) + notice(lastEventId, StreamOpening.EVENT_TYPE));
    }

    /**
     * The first frame of a resumed stream: {@code :ok} and the reconnection delay, without an id, so that a
     * client cut off during the replay resumes where it got to.
     */
    public static byte[] resumedOpening(Duration retry) {
        return ascii(":ok\n" + retryField(retry) + "\n");
    }

    /** The {@link ReplayGap} notice: events the client may have missed, and why. */
    public static byte[] gap(ReplayGap gap) {
        try {
            return utf8("event: " + ReplayGap.EVENT_TYPE + "\ndata: " + JsonMapper.get().writeValueAsString(gap)
                    + "\n\n");
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** The {@link PageEnd} notice, the last frame of a stream that carried one page of the event log. */
    public static byte[] pageEnd(long lastEventId) {
        return ascii(notice(lastEventId, PageEnd.EVENT_TYPE));
    }

    /** An empty comment, which keeps an idle stream's connection known to be alive. */
    public static byte[] heartbeat() {
        return ascii(":\n\n");
    }

    /** A comment that a client shows no one: for a person reading the stream with curl. */
    public static byte[] comment(String text) {
        // One line: a line break in the text would start a field of its own.
        return utf8(": " + text.replace('\r', ' ').replace('\n', ' ') + "\n\n");
    }

    /**
     * A refusal: the reconnection delay and an {@value ErrorMessage#UNAVAILABLE_EVENT_TYPE} notice carrying
     * the 503 {@link ErrorMessage}. The stream ends after it and the client comes back after {@code retry}.
     */
    public static byte[] refusal(Duration retry, String origin, String message) {
        return utf8(retryField(retry) + "event: " + ErrorMessage.UNAVAILABLE_EVENT_TYPE + "\ndata: "
                + ErrorBodies.jsonText(503, ExceptionType.UNAVAILABLE, message, origin)
                + "\n\n");
    }

    private static String retryField(Duration retry) {
        return "retry: " + retry.toMillis() + "\n";
    }

    /** A notice whose id and data both carry {@code lastEventId}: clients take an id only from a frame with data. */
    private static String notice(long lastEventId, String eventType) {
        return "id: " + lastEventId + "\nevent: " + eventType + "\ndata: {\"lastEventId\":" + lastEventId + "}\n\n";
    }

    private static int put(byte[] into, int at, byte[] bytes) {
        System.arraycopy(bytes, 0, into, at, bytes.length);
        return at + bytes.length;
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}

package eu.arrowhead.eventhandler.subscriber;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads a {@code text/event-stream} as the WHATWG HTML specification's "event stream interpretation"
 * does: UTF-8 (invalid bytes become U+FFFD), one optional byte order mark, lines ended by CRLF, LF or CR,
 * {@code :} comments, the fields {@code event}, {@code data} (lines joined with LF), {@code id} and
 * {@code retry} (the stream's reconnection time, kept as {@link #retryMillis()}), an event dispatched at a
 * blank line and only if it had data, and an unfinished event at the end of the stream discarded. Unknown
 * fields are ignored.
 *
 * <p>Unlike a browser's EventSource it also returns comments, since the Event Handler opens every stream
 * with one ({@code :ok}), and a frame with an {@code id} but no data, which an EventSource does not
 * dispatch but takes as its new last event id (how servers before {@code eventhandler.open} announced a new
 * stream's position). It reports only the {@code id} of the frame itself (the subscription keeps track of
 * the last id). Not thread-safe.
 */
final class SseParser {
    /** A longer line, or more data in one event, means the stream is broken rather than that we need more memory. */
    static final int MAX_LINE_BYTES = 16 << 20;

    /**
     * One thing read from the stream: an event, or a comment.
     *
     * @param id      the event's {@code id} field, or null if it had none
     * @param event   the event's type: its {@code event} field, or {@code message} if it had none
     * @param data    the event's data lines, joined with LF; null for a frame that only sets the id
     * @param comment for a comment, the text after the colon; null for an event
     */
    record Frame(String id, String event, String data, String comment) {
        static Frame comment(String text) {
            return new Frame(null, null, null, text);
        }

        boolean isComment() {
            return comment != null;
        }
    }

    private final InputStream in;
    private final byte[] buffer = new byte[8192];
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private int position;
    private int limit;
    private boolean afterCarriageReturn;
    private boolean firstLine = true;

    private String id;
    private String event;
    private StringBuilder data;
    private long retryMillis = -1;

    SseParser(InputStream in) {
        this.in = in;
    }

    /**
     * Reads until the next event or comment.
     *
     * @return the frame, or null at the end of the stream
     * @throws IOException if reading fails, or a line is longer than {@link #MAX_LINE_BYTES}
     */
    Frame next() throws IOException {
        for (String text = readLine(); text != null; text = readLine()) {
            if (text.isEmpty()) {
                Frame frame = data == null && id == null ? null
                        : new Frame(id, event == null ? "message" : event, data == null ? null : data.toString(), null);
                id = null;
                event = null;
                data = null;
                if (frame != null) {
                    return frame;
                }
            } else if (text.charAt(0) == ':') {
                return Frame.comment(text.substring(1));
            } else {
                field(text);
            }
        }
        return null;
    }

    private void field(String text) throws IOException {
        int colon = text.indexOf(':');
        String name = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(text.startsWith(" ", colon + 1) ? colon + 2 : colon + 1);
        switch (name) {
            case "event" -> event = value;
            case "data" -> {
                if (data == null) {
                    data = new StringBuilder(value);
                } else if (data.length() + value.length() >= MAX_LINE_BYTES) {
                    throw new IOException("an event of the stream carries more than " + MAX_LINE_BYTES
                            + " characters of data");
                } else {
                    data.append('\n').append(value);
                }
            }
            case "id" -> {
                if (value.indexOf('\0') < 0) {
                    id = value;
                }
            }
            case "retry" -> retry(value);
            default -> {
                // fields this parser does not know: ignored, as the specification says
            }
        }
    }

    /** As the specification says: only ASCII digits set the reconnection time; anything else is ignored. */
    private void retry(String value) {
        if (!value.isEmpty() && value.length() <= 18 && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            retryMillis = Long.parseLong(value);
        }
    }

    /**
     * The reconnection time the stream has set with its latest valid {@code retry} field so far, in
     * milliseconds; -1 if it has set none.
     */
    long retryMillis() {
        return retryMillis;
    }

    /** The next line without its end, or null at the end of the stream (an unfinished line is dropped). */
    private String readLine() throws IOException {
        line.reset();
        while (true) {
            if (position == limit) {
                int n = in.read(buffer);
                if (n < 0) {
                    return null;
                }
                position = 0;
                limit = n;
                continue;
            }
            if (afterCarriageReturn) {
                afterCarriageReturn = false;
                if (buffer[position] == '\n') {
                    position++;
                    continue;
                }
            }
            int start = position;
            while (position < limit && buffer[position] != '\n' && buffer[position] != '\r') {
                position++;
            }
            line.write(buffer, start, position - start);
            if (line.size() > MAX_LINE_BYTES) {
                throw new IOException("a line of the stream is longer than " + MAX_LINE_BYTES + " bytes");
            }
            if (position < limit) {
                afterCarriageReturn = buffer[position++] == '\r';
                return decode();
            }
        }
    }

    private String decode() {
        String text = line.toString(StandardCharsets.UTF_8);
        if (firstLine) {
            firstLine = false;
            if (text.startsWith("\uFEFF")) {
                return text.substring(1);
            }
        }
        return text;
    }
}

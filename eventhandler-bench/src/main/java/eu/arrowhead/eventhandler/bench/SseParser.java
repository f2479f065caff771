package eu.arrowhead.eventhandler.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Splits an SSE body into frames as the SSE specification does: lines end with LF, CR or CRLF; a blank line
 * ends a frame; a line starting with ':' is a comment; {@code data} lines join with LF; unknown fields are
 * ignored. A frame is passed on whole, with whatever it carried: a comment, an id, an event. Bytes are
 * pushed in as they arrive, so one parser serves a blocking reader and a selector alike.
 */
final class SseParser {
    private final Consumer<SseFrame> frames;
    private byte[] line = new byte[256];
    private int lineLength;
    private boolean afterCr;
    private String id;
    private String event;
    private StringBuilder data;
    private String comment;

    SseParser(Consumer<SseFrame> frames) {
        this.frames = frames;
    }

    void feed(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            byte b = bytes[i];
            if (b == '\n' && afterCr) {
                afterCr = false;
            } else if (b == '\n' || b == '\r') {
                afterCr = b == '\r';
                endLine();
            } else {
                afterCr = false;
                if (lineLength == line.length) {
                    line = Arrays.copyOf(line, line.length * 2);
                }
                line[lineLength++] = b;
            }
        }
    }

    private void endLine() {
        String text = new String(line, 0, lineLength, StandardCharsets.UTF_8);
        lineLength = 0;
        if (text.isEmpty()) {
            endFrame();
        } else if (text.charAt(0) == ':') {
            comment = text.substring(1);
        } else {
            int colon = text.indexOf(':');
            String field = colon < 0 ? text : text.substring(0, colon);
            String value = colon < 0 ? "" : text.substring(text.startsWith(" ", colon + 1) ? colon + 2 : colon + 1);
            switch (field) {
                case "id" -> id = value;
                case "event" -> event = value;
                case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                default -> {
                    // the specification says to ignore a field it does not define (retry among them here)
                }
            }
        }
    }

    private void endFrame() {
        if (data != null || comment != null || id != null) {
            frames.accept(new SseFrame(id, event, data == null ? null : data.toString(), comment, System.nanoTime()));
        }
        id = null;
        event = null;
        data = null;
        comment = null;
    }
}

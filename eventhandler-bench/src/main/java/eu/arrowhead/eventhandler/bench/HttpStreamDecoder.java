package eu.arrowhead.eventhandler.bench;

import java.util.Locale;

/**
 * Decodes the HTTP response to a subscription as its bytes arrive: checks the status line, reads the
 * headers, then hands the body to an {@link SseParser}, undoing chunked transfer encoding on the way.
 */
final class HttpStreamDecoder {
    private static final int MAX_HEAD_CHARS = 16_384;

    private enum State { HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, IDENTITY, ENDED }

    private final SseParser body;
    private final StringBuilder text = new StringBuilder();
    private State state = State.HEAD;
    private long chunkLeft;
    private int status;

    HttpStreamDecoder(SseParser body) {
        this.body = body;
    }

    /**
     * Takes the next bytes of the response.
     *
     * @throws BenchException if the answer is not a 200 or breaks the HTTP framing
     */
    void feed(byte[] bytes, int offset, int length) {
        int at = offset;
        int end = offset + length;
        while (at < end) {
            switch (state) {
                case HEAD, CHUNK_SIZE -> at = readLine(bytes, at, end);
                case CHUNK_DATA -> {
                    int n = (int) Math.min(chunkLeft, end - at);
                    body.feed(bytes, at, n);
                    at += n;
                    chunkLeft -= n;
                    if (chunkLeft == 0) {
                        state = State.CHUNK_END;
                    }
                }
                case CHUNK_END -> {
                    byte b = bytes[at++];
                    if (b == '\n') {
                        state = State.CHUNK_SIZE;
                    } else if (b != '\r') {
                        throw new BenchException("broken chunked encoding: no CRLF after a chunk");
                    }
                }
                case IDENTITY -> {
                    body.feed(bytes, at, end - at);
                    at = end;
                }
                // what follows the last chunk is its trailer section, which means nothing to a subscriber
                case ENDED -> at = end;
            }
        }
    }

    /** The status code of the answer, or 0 while its head has not arrived whole (or was not HTTP). */
    int status() {
        return status;
    }

    /** Whether the server ended the body (the last, empty chunk). */
    boolean ended() {
        return state == State.ENDED;
    }

    /** Collects a line of the head or a chunk size line; acts on it once its LF arrives. */
    private int readLine(byte[] bytes, int at, int end) {
        while (at < end) {
            char c = (char) (bytes[at++] & 0xff);
            text.append(c);
            if (text.length() > MAX_HEAD_CHARS) {
                throw new BenchException("the response head is larger than " + MAX_HEAD_CHARS + " bytes");
            }
            if (c == '\n') {
                if (state == State.HEAD) {
                    headLine();
                } else {
                    chunkSize();
                }
                return at;
            }
        }
        return at;
    }

    private void headLine() {
        int blank = text.indexOf("\r\n\r\n");
        if (blank < 0) {
            return;
        }
        String head = text.substring(0, blank);
        text.setLength(0);
        String statusLine = head.lines().findFirst().orElse("");
        if (statusLine.matches("HTTP/1\\.[01] \\d{3}( .*)?")) {
            status = Integer.parseInt(statusLine.substring(9, 12));
        }
        if (status != 200) {
            throw new BenchException("the subscription was answered '" + statusLine + "' instead of 200");
        }
        boolean chunked = head.lines().skip(1).map(line -> line.toLowerCase(Locale.ROOT).replace(" ", ""))
                .anyMatch(line -> line.startsWith("transfer-encoding:") && line.endsWith("chunked"));
        state = chunked ? State.CHUNK_SIZE : State.IDENTITY;
    }

    private void chunkSize() {
        String line = text.toString().trim();
        text.setLength(0);
        int extension = line.indexOf(';');
        String hex = extension < 0 ? line : line.substring(0, extension).trim();
        try {
            chunkLeft = Long.parseLong(hex, 16);
        } catch (NumberFormatException e) {
            throw new BenchException("broken chunked encoding: '" + line + "' is no chunk size");
        }
        // A last chunk means the server ended the stream; its trailers, if any, do not matter here.
        state = chunkLeft == 0 ? State.ENDED : State.CHUNK_DATA;
    }
}

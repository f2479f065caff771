package eu.arrowhead.eventhandler.http;

import org.glassfish.grizzly.Buffer;

/**
 * The bytes of a request's start line and header fields, checked against RFC 9112's grammar before Grizzly
 * parses them. Grizzly is lenient where the RFC says a server must refuse: it waits for more input after a
 * header line without a colon (the client then hangs until the idle timeout), and it takes whitespace before
 * a colon, folded lines (obs-fold), control characters in a value and a bare CR or LF as a line end. A
 * server that reads such a header otherwise than a proxy in front of it lets requests be smuggled past the
 * proxy (RFC 9112 5.1, 11.2).
 *
 * <p>The rules, each a 400 (but one) with the connection closed:
 * <ul>
 *   <li>the request line is {@code method SP target SP HTTP/d.d CRLF}: a method of token characters, a
 *       target of visible ASCII, one space each; empty lines before it are skipped (RFC 9112 2.2); a major
 *       version other than 1 is a 505;</li>
 *   <li>every line ends with CRLF: a CR not followed by LF, or an LF without its CR, is refused (the RFC
 *       lets a server take a bare LF as a line end; refusing is simpler and no HTTP client sends one);</li>
 *   <li>a header line is {@code name ":" value}: the name one or more token characters right before the
 *       colon, no whitespace at the start of a line (which would be obs-fold, or whitespace between the start
 *       line and the first header);</li>
 *   <li>a value holds no control characters but HTAB (no NUL, no DEL).</li>
 * </ul>
 *
 * <p>Cost: one pass over the header bytes with a table lookup each, about 1 ns per byte (a publish's
 * header, some 150 bytes, takes well under a microsecond), on the selector thread that parses it anyway.
 */
final class HeaderSyntax {
    /** What {@link #check} returns when the header ends within the bytes given. */
    static final int COMPLETE = -1;
    /** What {@link #check} returns when not even the request line is whole yet. */
    static final int REQUEST_LINE_INCOMPLETE = -2;

    private static final byte CR = '\r';
    private static final byte LF = '\n';
    private static final boolean[] TOKEN = new boolean[256];

    static {
        for (int c = '0'; c <= '9'; c++) {
            TOKEN[c] = true;
        }
        for (int c = 'a'; c <= 'z'; c++) {
            TOKEN[c] = true;
            TOKEN[c - 'a' + 'A'] = true;
        }
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
            TOKEN[c] = true;
        }
    }

    /** A header that breaks the grammar; its message says how, for the client. */
    static final class Violation extends RuntimeException {
        private final int status;

        Violation(String message) {
            this(400, message);
        }

        Violation(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }

        /** 400, or 505 for a request of another major version than HTTP/1. */
        int status() {
            return status;
        }
    }

    private HeaderSyntax() {
    }

    /**
     * Checks the whole lines of a request's header in {@code input} up to {@code end}.
     *
     * @param start    where the request starts in {@code input}
     * @param resumeAt where the first header line not yet checked starts, or a negative number when the
     *                 request line has not been checked yet
     * @return {@link #COMPLETE} when the header's empty line was reached; else where checking must resume
     *         once more bytes have arrived ({@link #REQUEST_LINE_INCOMPLETE} if the request line is not whole)
     * @throws Violation when a line breaks the grammar
     */
    static int check(Buffer input, int start, int resumeAt, int end) {
        int line = resumeAt;
        if (line < 0) {
            line = requestLineEnd(input, skipEmptyLines(input, start, end), end);
            if (line < 0) {
                return REQUEST_LINE_INCOMPLETE;
            }
        }
        while (true) {
            int next = fieldLineEnd(input, line, end);
            if (next == COMPLETE || next < 0) {
                return next == COMPLETE ? COMPLETE : line;
            }
            line = next;
        }
    }

    private static int skipEmptyLines(Buffer input, int at, int end) {
        while (at + 1 < end && input.get(at) == CR && input.get(at + 1) == LF) {
            at += 2;
        }
        return at;
    }

    /** Where the line after the request line starts, or -1 if the request line is not whole yet. */
    private static int requestLineEnd(Buffer input, int at, int end) {
        int i = at;
        while (i < end && TOKEN[input.get(i) & 0xff]) {
            i++;
        }
        if (i == end) {
            return -1;
        }
        if (i == at || input.get(i) != ' ') {
            throw new Violation("the request line must start with a method (letters and the like) and one space;"
                    + " found " + describe(input.get(i)));
        }
        int target = ++i;
        while (i < end && isVisible(input.get(i))) {
            i++;
        }
        if (i == end) {
            return -1;
        }
        if (i == target || input.get(i) != ' ') {
            throw new Violation("the request target must be visible ASCII characters followed by one space;"
                    + " found " + describe(input.get(i)));
        }
        int version = ++i;
        if (end - version < 10) {
            checkVersionPrefix(input, version, end);
            return -1;
        }
        checkVersionPrefix(input, version, version + 8);
        if (input.get(version + 5) != '1') {
            // Grizzly would serve it as HTTP/1.1 (RFC 9110 15.6.6).
            throw new Violation(505, "the server speaks HTTP/1.1 only; the request is HTTP/"
                    + (char) input.get(version + 5) + "." + (char) input.get(version + 7));
        }
        return lineEnd(input, version + 8, end, "after the HTTP version");
    }

    /** {@code HTTP/d.d}, as far as it has arrived. */
    private static void checkVersionPrefix(Buffer input, int at, int end) {
        String form = "HTTP/0.0";
        for (int i = 0; i < form.length() && at + i < end; i++) {
            byte b = input.get(at + i);
            boolean fits = form.charAt(i) == '0' ? b >= '0' && b <= '9' : b == form.charAt(i);
            if (!fits) {
                throw new Violation("the request line must end with the HTTP version, as in HTTP/1.1; found "
                        + describe(b));
            }
        }
    }

    /**
     * Checks one header line.
     *
     * @return where the next line starts; {@link #COMPLETE} for the empty line that ends the header; -2 when the
     *         line is not whole yet
     */
    private static int fieldLineEnd(Buffer input, int at, int end) {
        if (at >= end) {
            return -2;
        }
        byte first = input.get(at);
        if (first == CR || first == LF) {
            return lineEnd(input, at, end, "at the end of the header") < 0 ? -2 : COMPLETE;
        }
        if (first == ' ' || first == '\t') {
            throw new Violation("a header line starts with whitespace: a folded value (obs-fold) or whitespace"
                    + " before the first header, which HTTP/1.1 does not allow");
        }
        int i = at;
        while (i < end && TOKEN[input.get(i) & 0xff]) {
            i++;
        }
        if (i == end) {
            return -2;
        }
        byte after = input.get(i);
        if (after != ':') {
            throw new Violation(after == ' ' || after == '\t'
                    ? "a header has whitespace between its name and the colon"
                    : after == CR || after == LF ? "a header line has no colon"
                    : "a header name has " + describe(after) + ", which a header name may not hold");
        }
        if (i == at) {
            throw new Violation("a header line has no name before its colon");
        }
        for (i++; i < end; i++) {
            byte b = input.get(i);
            if (b == CR || b == LF) {
                int next = lineEnd(input, i, end, "in a header value");
                return next < 0 ? -2 : next;
            }
            if (b != '\t' && (b & 0xff) < 0x20 || b == 0x7f) {
                throw new Violation("a header value holds the control character " + describe(b));
            }
        }
        return -2;
    }

    /** Where the next line starts after the CRLF at {@code at}, or -1 if it has not arrived whole. */
    private static int lineEnd(Buffer input, int at, int end, String where) {
        if (at >= end) {
            return -1;
        }
        byte b = input.get(at);
        if (b == LF) {
            throw new Violation("a line ends with LF alone " + where + "; HTTP/1.1 lines end with CRLF");
        }
        if (b != CR) {
            throw new Violation("unexpected " + describe(b) + " " + where);
        }
        if (at + 1 >= end) {
            return -1;
        }
        if (input.get(at + 1) != LF) {
            throw new Violation("a CR not followed by LF " + where + "; HTTP/1.1 lines end with CRLF");
        }
        return at + 2;
    }

    private static boolean isVisible(byte b) {
        return b > 0x20 && b < 0x7f;
    }

    private static String describe(byte b) {
        int c = b & 0xff;
        return c > 0x20 && c < 0x7f ? "'" + (char) c + "'" : String.format("byte 0x%02X", c);
    }
}

package eu.arrowhead.eventhandler.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The answer to a stream request that the server must refuse for now, read byte for byte over a bare socket:
 * a 200 event stream with {@code Retry-After}, whose whole body is {@code retry:} and one
 * {@code eventhandler.unavailable} notice, and which ends (the request asks for {@code Connection: close},
 * so the end of the response is the end of the connection). A resume refused while it waited for its replay
 * was opened already: its chunked body is the opening ({@code :ok} and {@code retry:}), heartbeats, and then
 * the same notice.
 */
public final class RefusedStream {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TIMEOUT_MILLIS = 30_000;

    private RefusedStream() {
    }

    /** Sends {@code GET /eventhandler/events<query>} with the extra header lines; see {@link #check}. */
    public static ErrorMessage request(int port, String query, long retryMillis, String... headerLines) {
        StringBuilder request = new StringBuilder("GET /eventhandler/events" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\nConnection: close\r\n");
        for (String line : headerLines) {
            request.append(line).append("\r\n");
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            return check(socket, request.append("\r\n").toString(), retryMillis);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Sends the request on an open connection, reads the answer to its end and checks it.
     *
     * @return the notice's ErrorMessage, whose errorCode and exceptionType are checked
     */
    public static ErrorMessage check(Socket socket, String request, long retryMillis) throws IOException {
        socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        String answer = readToEnd(socket);
        int headEnd = answer.indexOf("\r\n\r\n");
        if (headEnd < 0) {
            throw new AssertionError("no complete HTTP answer: '" + answer + "'");
        }
        String[] head = answer.substring(0, headEnd).split("\r\n");
        String body = answer.substring(headEnd + 4);
        if (!head[0].startsWith("HTTP/1.1 200")) {
            throw new AssertionError("a refusal is a 200 stream, not: " + head[0] + "\n" + answer);
        }
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < head.length; i++) {
            int colon = head[i].indexOf(':');
            headers.put(head[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), head[i].substring(colon + 1).trim());
        }
        expect("text/event-stream", headers.getOrDefault("content-type", "").replaceAll(";.*", ""), "Content-Type");
        if ("chunked".equals(headers.get("transfer-encoding"))) {
            body = afterOpening(dechunked(body), retryMillis);
        } else {
            expect(Long.toString(Math.max(1, (retryMillis + 999) / 1000)), headers.get("retry-after"), "Retry-After");
            expect(Integer.toString(body.getBytes(StandardCharsets.UTF_8).length), headers.get("content-length"),
                    "Content-Length (the whole body arrived and the response ended)");
        }
        String prefix = "retry: " + retryMillis + "\nevent: " + ErrorMessage.UNAVAILABLE_EVENT_TYPE + "\ndata: ";
        if (!body.startsWith(prefix) || !body.endsWith("}\n\n") || body.indexOf('\n', prefix.length()) != body.length() - 2) {
            throw new AssertionError("not the refusal stream: '" + body + "'");
        }
        ErrorMessage error = JSON.readValue(body.substring(prefix.length(), body.length() - 2), ErrorMessage.class);
        expect("503", Integer.toString(error.errorCode()), "errorCode");
        expect("UNAVAILABLE", error.exceptionType(), "exceptionType");
        expect("/eventhandler/events", error.origin(), "origin");
        return error;
    }

    /** The body of a stream opened ahead of its replay, from the notice on: the opening and heartbeats cut off. */
    private static String afterOpening(String body, long retryMillis) {
        String opening = ":ok\nretry: " + retryMillis + "\n\n";
        if (!body.startsWith(opening)) {
            throw new AssertionError("a chunked refusal follows the stream's opening: '" + body + "'");
        }
        String rest = body.substring(opening.length());
        while (rest.startsWith(":\n\n")) {
            rest = rest.substring(3);
        }
        return rest;
    }

    /** A chunked body, whole: the last chunk must have arrived (the response ended, it was not cut). */
    private static String dechunked(String chunked) {
        StringBuilder body = new StringBuilder();
        int at = 0;
        while (true) {
            int lineEnd = chunked.indexOf("\r\n", at);
            if (lineEnd < 0) {
                throw new AssertionError("the chunked body was cut off: '" + chunked + "'");
            }
            int size = Integer.parseInt(chunked.substring(at, lineEnd).trim(), 16);
            if (size == 0) {
                return body.toString();
            }
            // Sizes count bytes; every byte of an SSE refusal and its opening is ASCII.
            body.append(chunked, lineEnd + 2, lineEnd + 2 + size);
            at = lineEnd + 2 + size + 2;
        }
    }

    private static String readToEnd(Socket socket) throws IOException {
        socket.setSoTimeout(TIMEOUT_MILLIS);
        InputStream in = socket.getInputStream();
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                received.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the refusal did not end within " + TIMEOUT_MILLIS + " ms; got: "
                    + received.toString(StandardCharsets.UTF_8));
        } catch (IOException reset) {
            throw new AssertionError("the connection was cut instead of answered; got: '"
                    + received.toString(StandardCharsets.UTF_8) + "'", reset);
        }
        return received.toString(StandardCharsets.UTF_8);
    }

    private static void expect(String expected, String actual, String what) {
        if (!expected.equals(actual)) {
            throw new AssertionError(what + ": expected '" + expected + "', got '" + actual + "'");
        }
    }
}

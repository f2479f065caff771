package eu.arrowhead.eventhandler.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 connection on a bare socket, for requests that must go out byte for byte as written (a
 * malformed one, a body sent in parts, a body that never ends) and answers read as they come.
 */
public final class RawHttp implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        // Buffered: answers are read a byte at a time, and a test may read thousands of them.
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects to the server on this machine's {@code port}. */
    public static RawHttp connect(int port) {
        try {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            return new RawHttp(socket);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads and writes a socket connected already, for a test that had to set it up itself. */
    public static RawHttp over(Socket socket) {
        try {
            return new RawHttp(socket);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends one request on a new connection and reads the answer: for the common case. */
    public static Answer exchange(int port, String request) {
        return exchange(port, request.getBytes(StandardCharsets.ISO_8859_1));
    }

    public static Answer exchange(int port, byte[] request) {
        try (RawHttp http = connect(port)) {
            http.send(request);
            return http.answer(Duration.ofSeconds(20));
        }
    }

    /** Sends bytes as they are (a string's characters are taken as bytes, ISO-8859-1). */
    public RawHttp send(String bytes) {
        return send(bytes.getBytes(StandardCharsets.ISO_8859_1));
    }

    public RawHttp send(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether bytes can still be sent: false once the server has closed the connection. */
    public boolean trySend(String bytes) {
        try {
            out.write(bytes.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether an answer has started to arrive, without waiting. */
    public boolean answered() {
        try {
            return in.available() > 0;
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * Reads one answer: status line, headers, and a body of its Content-Length; a read that waits longer than
     * {@code timeout} fails the test.
     */
    public Answer answer(Duration timeout) {
        try {
            socket.setSoTimeout((int) timeout.toMillis());
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new AssertionError("the connection closed before an answer; got: " + head);
                }
                head.write(b);
            }
            String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
            Map<String, String> headers = new HashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.merge(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        lines[i].substring(colon + 1).trim(), (a, b) -> a + ", " + b);
            }
            int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
            String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            return new Answer(Integer.parseInt(lines[0].split(" ")[1]), headers, body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether the server closes the connection within {@code timeout} (ignoring anything more it sends). */
    public boolean closedWithin(Duration timeout) {
        try {
            socket.setSoTimeout((int) timeout.toMillis());
            byte[] buffer = new byte[4096];
            while (in.read(buffer) >= 0) {
                // drained
            }
            return true;
        } catch (SocketException reset) {
            return true;
        } catch (IOException timedOut) {
            return false;
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /**
     * An answer.
     *
     * @param headers by lower-case name; repeated headers joined with ", "
     */
    public record Answer(int status, Map<String, String> headers, String body) {
        public String header(String name) {
            return headers.getOrDefault(name.toLowerCase(Locale.ROOT), "");
        }
    }
}

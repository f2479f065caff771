package eu.arrowhead.eventhandler.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Publish requests whose bodies arrive a byte at a time, as a slowloris client sends them: each connection
 * sends the request's head (with the body's full {@code Content-Length}) at once, then one more byte of
 * the body at each {@link #tick}, until the server answers or closes. All on the caller's thread, with
 * non-blocking sockets: the bench holds no thread per connection.
 */
final class TricklingBodies implements AutoCloseable {
    private static final int READ_BUFFER_BYTES = 4096;
    private static final String NO_ANSWER = "no answer yet";

    private final List<Connection> connections;
    private final long startNanos = System.nanoTime();

    private TricklingBodies(List<Connection> connections) {
        this.connections = connections;
    }

    /** Opens {@code count} connections to {@code address}, each with the head of a publish of {@code body}. */
    static TricklingBodies open(InetSocketAddress address, int count, byte[] body, Deadline deadline) {
        List<Connection> connections = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                deadline.check();
                SocketChannel channel = SocketChannel.open();
                connections.add(new Connection(channel, body));
                channel.socket().connect(address, deadline.remainingMillis());
                ByteBuffer head = ByteBuffer.wrap(head(address, body.length));
                while (head.hasRemaining()) {
                    channel.write(head);
                }
                channel.configureBlocking(false);
            }
        } catch (IOException | RuntimeException e) {
            connections.forEach(Connection::close);
            throw new BenchException("cannot open " + count + " trickling connections to " + address + ": " + e, e);
        }
        return new TricklingBodies(connections);
    }

    /**
     * Sends {@code declaredBytes} as a publish's {@code Content-Length} and no body at all, and waits up to
     * {@code timeout} for the answer's status line: a server that refuses a body over its limit does so at
     * once, before any of it arrives.
     */
    static HttpProbe.Answer declaredOnly(InetSocketAddress address, long declaredBytes, Duration timeout) {
        long start = System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(address, (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            socket.getOutputStream().write(head(address, declaredBytes));
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            for (int b; (b = in.read()) >= 0 && b != '\n'; ) {
                line.write(b);
            }
            String statusLine = line.toString(StandardCharsets.US_ASCII).trim();
            return new HttpProbe.Answer(status(statusLine), statusLine.isEmpty() ? "closed without an answer"
                    : statusLine, System.nanoTime() - start);
        } catch (SocketTimeoutException e) {
            return new HttpProbe.Answer(0, "none within " + timeout.toSeconds() + " s", System.nanoTime() - start);
        } catch (IOException e) {
            return new HttpProbe.Answer(0, e.toString(), System.nanoTime() - start);
        }
    }

    private static byte[] head(InetSocketAddress address, long contentLength) {
        return ("POST /eventhandler/publish HTTP/1.1\r\n"
                + "Host: " + address.getHostString() + ":" + address.getPort() + "\r\n"
                + "Content-Type: application/json\r\n"
                + "Content-Length: " + contentLength + "\r\n"
                + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** The status code of an HTTP status line, or 0 if it is none. */
    private static int status(String statusLine) {
        return statusLine.matches("HTTP/1\\.[01] \\d{3}.*") ? Integer.parseInt(statusLine.substring(9, 12)) : 0;
    }

    /** Reads what each connection has got, and sends one more byte where no answer has come. */
    void tick() {
        connections.forEach(connection -> connection.tick(startNanos));
    }

    /** Whether every connection has been answered or closed. */
    boolean allDecided() {
        return connections.stream().noneMatch(connection -> connection.outcome.equals(NO_ANSWER));
    }

    /**
     * What the connections got, by outcome: an answer's status, closed without one, reset, or
     * {@value #NO_ANSWER}; each with how many, and the first and last time after the start it came.
     */
    List<List<Object>> outcomes() {
        Map<String, List<Connection>> byOutcome = new LinkedHashMap<>();
        connections.forEach(connection -> byOutcome.computeIfAbsent(connection.outcome, key -> new ArrayList<>())
                .add(connection));
        List<List<Object>> rows = new ArrayList<>();
        byOutcome.forEach((outcome, group) -> rows.add(Arrays.asList(outcome, group.size(),
                group.stream().mapToInt(connection -> connection.sent).min().orElse(0),
                seconds(group.stream().mapToLong(connection -> connection.decidedNanos).min().orElse(0)),
                seconds(group.stream().mapToLong(connection -> connection.decidedNanos).max().orElse(0)))));
        return rows;
    }

    /** The outcomes' labels, each with its count: for the failures a caller reports. */
    Map<String, Integer> counts() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        connections.forEach(connection -> counts.merge(connection.outcome, 1, Integer::sum));
        return counts;
    }

    private static Object seconds(long nanos) {
        return nanos == 0 ? null : ResultTable.seconds(nanos);
    }

    @Override
    public void close() {
        connections.forEach(Connection::close);
    }

    /** One slow request; touched only by the caller's thread. */
    private static final class Connection {
        private final SocketChannel channel;
        private final byte[] body;
        private final ByteArrayOutputStream answer = new ByteArrayOutputStream();
        private final ByteBuffer readBuffer = ByteBuffer.allocate(READ_BUFFER_BYTES);
        private int sent;
        private String outcome = NO_ANSWER;
        /** When the outcome came, from the start of the trickle; 0 while there is none. */
        private long decidedNanos;

        Connection(SocketChannel channel, byte[] body) {
            this.channel = channel;
            this.body = body;
        }

        void tick(long startNanos) {
            if (!outcome.equals(NO_ANSWER)) {
                return;
            }
            try {
                for (int n; (n = channel.read(readBuffer.clear())) != 0; ) {
                    if (n < 0) {
                        decide(answerOrElse("closed without an answer"), startNanos);
                        return;
                    }
                    answer.write(readBuffer.array(), 0, n);
                }
                String text = answer.toString(StandardCharsets.US_ASCII);
                if (text.contains("\r\n")) {
                    decide(answerOrElse("closed without an answer"), startNanos);
                    return;
                }
                if (sent < body.length) {
                    sent += channel.write(ByteBuffer.wrap(body, sent, 1));
                }
            } catch (IOException e) {
                decide(answerOrElse("reset (" + e.getMessage() + ")"), startNanos);
            }
        }

        /** "answered STATUS" once a status line has come, else {@code otherwise}. */
        private String answerOrElse(String otherwise) {
            String text = answer.toString(StandardCharsets.US_ASCII);
            int end = text.indexOf("\r\n");
            int status = end < 0 ? 0 : status(text.substring(0, end));
            return status != 0 ? "answered " + status : otherwise;
        }

        private void decide(String what, long startNanos) {
            outcome = what;
            decidedNanos = System.nanoTime() - startNanos;
            close();
        }

        void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing more to release
            }
        }
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestClient;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29: connections an anonymous client opens and leaves idle, each with most of a request's head sent, or with
 * nothing sent. Before {@code server.max-incomplete-heads}, 6 000 of the first (7.5 KB each) ran a {@code -Xmx64m}
 * server out of heap and killed its selector threads; 2 500 hold some 62 MB. Before
 * {@code server.max-silent-connections}, only the descriptors bounded the second (1.5 KB each, 30 MB at 20 000). Now
 * the one waiting longest gives way to each new one: the server stays up, answers a new client at once, and an SSE
 * stream opened before the flood still gets its events.
 */
class WaitingConnectionsIT {
    private static final int CONNECTIONS = 2_500;
    private static final byte[] MOST_OF_A_HEAD = ("GET /eventhandler/mgmt/health HTTP/1.1\r\nHost: x\r\nX-Padding: "
            + "p".repeat(7_500)).getBytes(StandardCharsets.US_ASCII);

    private static final byte[] NOTHING = new byte[0];

    @Test
    void connectionsWithHalfSentHeadsGiveWayInsteadOfFillingTheHeap(@TempDir Path dir) throws Exception {
        floodGivesWay(dir, MOST_OF_A_HEAD, "eventhandler_connections_incomplete_heads_max");
    }

    @Test
    void connectionsThatSendNothingGiveWayInsteadOfFillingTheHeap(@TempDir Path dir) throws Exception {
        floodGivesWay(dir, NOTHING, "eventhandler_connections_silent_max");
    }

    /** Opens {@code CONNECTIONS} connections that each send {@code bytes} and nothing more, bounded by {@code max}. */
    private static void floodGivesWay(Path dir, byte[] bytes, String maxMetric) throws Exception {
        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(dir, "--server.port=0",
                "--server.host=127.0.0.1", "--store.mode=off", "--server.idle-timeout-seconds=600"));
             TestClient client = new TestClient(server.awaitListening(), null);
             RawSubscriber stream = RawSubscriber.open(client.uri("/").getPort(), "?eventType=kept", 65_536)) {
            URI base = client.uri("/");
            stream.awaitText(":ok", 10_000);
            int max = (int) client.metric(maxMetric);
            List<Socket> flood = new ArrayList<>();
            try {
                for (int i = 0; i < CONNECTIONS; i++) {
                    flood.add(connect(base.getPort(), bytes));
                }
                // While every incomplete head is under a second old, the newest but one is closed: a request sent
                // whole is spared unless another head begins on the other selector thread between its read and its
                // parse, so each goes on a connection of its own and is tried again if closed.
                Await.until("the flood's connections to give way to each other", Duration.ofSeconds(30),
                        Duration.ofMillis(100), () -> answered(base, scrape -> scrape.metric(
                                "eventhandler_connections_displaced_total") >= CONNECTIONS - max));
                // The count goes up as the close begins: the last few may take a moment to read as closed.
                Await.until("at most " + max + " of the flood's connections open", Duration.ofSeconds(30),
                        () -> flood.stream().filter(WaitingConnectionsIT::stillOpen).count() <= max);

                Await.until("a publish after the flood", Duration.ofSeconds(30), Duration.ofMillis(100),
                        () -> answered(base, publisher -> publisher.post("/eventhandler/publish",
                                "{\"eventType\":\"kept\",\"payload\":\"after the flood\"}").statusCode() == 200));
                stream.awaitText("after the flood", 10_000);
                Await.until("health answered after the flood", Duration.ofSeconds(30), Duration.ofMillis(100),
                        () -> answered(base, health -> health.get("/eventhandler/mgmt/health").statusCode() == 200));
            } finally {
                for (Socket socket : flood) {
                    socket.close();
                }
            }
            assertFalse(server.output().contains("java.lang.OutOfMemoryError"), server.output());
            // A request whose connection gave way is not served: served on a closed connection, Jersey logged two
            // stack traces for each.
            assertFalse(server.output().contains("\tat "), "no stack trace:\n" + server.output());
            long lines = server.output().lines().filter(line -> line.contains("closed the one waiting longest"))
                    .filter(line -> line.contains("WARN")).count();
            assertTrue(lines >= 1 && lines <= 2, lines + " lines: one a minute at most\n" + server.output());
        }
    }

    /** {@code request} on a new connection; false if the server closed it first. */
    private static boolean answered(URI base, Predicate<TestClient> request) {
        try (TestClient client = new TestClient(base, null)) {
            return request.test(client);
        } catch (UncheckedIOException closed) {
            return false;
        }
    }

    private static Socket connect(int port, byte[] bytes) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        OutputStream out = socket.getOutputStream();
        out.write(bytes);
        out.flush();
        return socket;
    }

    /** Whether the server has not closed the socket: a closed one reads its end at once. */
    private static boolean stillOpen(Socket socket) {
        try {
            socket.setSoTimeout(1);
            return socket.getInputStream().read() != -1;
        } catch (SocketTimeoutException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server at its descriptor limit: a process started under {@code ulimit -n 160}, and 400 idle connections.
 * It says so in one line, not once per failed accept (the selector retries thousands of times a second), and
 * says when it accepts again once the connections close, by itself. Meanwhile it pauses between tries of the
 * accept rather than spinning a core on them.
 */
class AcceptFailuresIT {
    private static final Pattern CANNOT_ACCEPT = Pattern.compile("WARN .*cannot accept connections: (.*)");

    @Test
    void descriptorExhaustionIsOneLineAndTheRecoveryAnother(@TempDir Path dir) throws Exception {
        List<String> java = ServerProcess.command(dir, "--server.port=0", "--server.host=127.0.0.1",
                "--store.mode=off").command();
        List<String> command = new ArrayList<>(List.of("bash", "-c", "ulimit -n 160 && exec \"$@\"", "bash"));
        command.addAll(java);
        try (ServerProcess server = ServerProcess.start(new ProcessBuilder(command).directory(dir.toFile())
                .redirectErrorStream(true))) {
            URI base = server.awaitListening();
            List<Socket> idle = new ArrayList<>();
            try {
                for (int i = 0; i < 400; i++) {
                    Socket socket = new Socket();
                    socket.connect(new InetSocketAddress("127.0.0.1", base.getPort()), 5_000);
                    idle.add(socket);
                }
                Matcher first = server.await(CANNOT_ACCEPT, 60);
                assertTrue(first.group(1).contains("Too many open files"), first.group(0));
                // Meanwhile the selector fails the accept over and over: still the one line.
                assertFalse(publishes(base, Duration.ofSeconds(2)), "a publish is answered at the limit");
                assertEquals(1, CANNOT_ACCEPT.matcher(server.output()).results().count(), server.output());
            } finally {
                for (Socket socket : idle) {
                    socket.close();
                }
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!publishes(base, Duration.ofSeconds(5))) {
                assertTrue(System.nanoTime() < deadline, "no publish answered after the connections closed");
            }
            Matcher again = server.await(Pattern.compile("INFO .*accepting connections again, after (\\d+) failed"
                    + " accepts in (\\d+) s"), 30);
            long failedAccepts = Long.parseLong(again.group(1));
            long seconds = Long.parseLong(again.group(2));
            assertTrue(failedAccepts >= 1, again.group(0));
            // Paused up to 200 ms after each failure: a few a second, where a spinning selector made thousands.
            assertTrue(failedAccepts <= 10 * (seconds + 1), "the selector retried without pause: " + again.group(0));
            assertFalse(server.output().contains("\tat "), "no stack trace:\n" + server.output());
        }
    }

    /** Whether a publish is answered 200 within {@code timeout}. */
    private static boolean publishes(URI base, Duration timeout) throws InterruptedException {
        HttpRequest publish = HttpRequest.newBuilder(base.resolve("/eventhandler/publish")).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"eventType\":\"fd.limit\",\"payload\":\"x\"}")).build();
        HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
        try {
            return client.send(publish, HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.UnixOperatingSystemMXBean;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finding 6 of issue 12: plain {@code GET /eventhandler/events} connections crashed a 64 MiB server with
 * an OutOfMemoryError at about 2 100 streams. The subscriber limit is now derived from the heap: streams up
 * to it are served, those beyond it are refused, and the server stays alive and keeps serving.
 */
class SubscriberLimitIT {
    private static final int BEYOND_THE_LIMIT = 200;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void atTheDerivedLimitA64MiBServerRefusesFurtherStreamsAndKeepsServing(@TempDir Path workingDirectory)
            throws Exception {
        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory, "--server.port=0",
                "--server.host=127.0.0.1"))) {
            URI base = server.awaitListening();
            int limit = (int) metric(base, "eventhandler_subscribers_max");
            assertTrue(limit > 250 && limit < 300, "the limit derived from 64 MiB (278): " + limit);
            int attempts = limit + BEYOND_THE_LIMIT;
            assumeTrue(fileDescriptors() > attempts + 1_000, "this test holds " + attempts + " sockets: raise"
                    + " ulimit -n (.ci/run does)");

            List<Socket> served = new ArrayList<>();
            int refused = 0;
            try {
                for (int i = 0; i < attempts; i++) {
                    Socket socket = subscribe(base);
                    if (answer(socket)) {
                        served.add(socket);
                    } else {
                        refused++;
                        socket.close();
                    }
                }
                assertEquals(attempts, served.size() + refused, "every stream was answered");
                assertTrue(refused >= BEYOND_THE_LIMIT, refused + " refused");
                // Every stream is charged its heap; these bare requests cost a little more than the least.
                assertTrue(served.size() >= limit * 9 / 10, served.size() + " served of a limit of " + limit);
                assertTrue(server.process().isAlive(), server.output());
                assertEquals((double) served.size(), metric(base, "eventhandler_subscribers"));

                assertEquals("Got it!", get(base, "/eventhandler/echo").body());
                HttpResponse<String> published = HTTP.send(HttpRequest.newBuilder(base.resolve("/eventhandler/publish"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"eventType\":\"idle\",\"payload\":\"still here\"}"))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, published.statusCode(), published.body());
                Matcher id = Pattern.compile("\"id\":(\\d+)").matcher(published.body());
                assertTrue(id.find(), published.body());
                for (Socket socket : List.of(served.get(0), served.get(served.size() - 1))) {
                    assertTrue(readUntil(socket, "id: " + id.group(1) + "\n").contains("still here"));
                }
            } finally {
                for (Socket socket : served) {
                    socket.close();
                }
            }
            Await.until("the closed streams give their places back", Duration.ofSeconds(30),
                    () -> metric(base, "eventhandler_subscribers") == 0);
            Socket again = subscribe(base);
            assertTrue(answer(again), "a stream is served again once places are free");
            again.close();
            assertTrue(!server.output().contains("OutOfMemoryError"), server.output());

            server.terminate();
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS), "the server did not stop");
            assertEquals(0, server.process().exitValue(), server.output());
        }
    }

    @Test
    void aSubscriberLimitThatCannotHoldWithinTheHeapStopsTheStart(@TempDir Path workingDirectory) throws Exception {
        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory, "--server.port=0",
                "--server.host=127.0.0.1", "--subscriber.max-count=20000"))) {
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
            assertEquals(2, server.process().exitValue());
            server.await(Pattern.compile("'subscriber.max-count' \\(20000\\) cannot hold within the heap"), 5);
        }
    }

    private static Socket subscribe(URI base) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(base.getHost(), base.getPort()), 10_000);
        socket.setSoTimeout(30_000);
        socket.getOutputStream().write(("GET /eventhandler/events?eventType=idle HTTP/1.1\r\nHost: "
                + base.getHost() + "\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    /**
     * Whether the stream was served; false if it was refused (a 503, or a refusal stream that names itself
     * {@code eventhandler.unavailable}). Fails if no answer comes.
     */
    private static boolean answer(Socket socket) throws IOException {
        String received = readUntilAny(socket, ":ok", "eventhandler.unavailable", " 503 ");
        return received.startsWith("HTTP/1.1 200") && !received.contains("eventhandler.unavailable");
    }

    private static String readUntil(Socket socket, String text) throws IOException {
        return readUntilAny(socket, text);
    }

    private static String readUntilAny(Socket socket, String... texts) throws IOException {
        InputStream in = socket.getInputStream();
        StringBuilder received = new StringBuilder();
        byte[] buffer = new byte[4096];
        while (true) {
            for (String text : texts) {
                if (received.indexOf(text) >= 0) {
                    return received.toString();
                }
            }
            int n = in.read(buffer);
            if (n < 0) {
                throw new AssertionError("the connection closed without an answer; got: " + received);
            }
            received.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
        }
    }

    private static double metric(URI base, String series) {
        for (String line : get(base, "/metrics").body().split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).strip());
            }
        }
        throw new AssertionError("no series " + series);
    }

    private static HttpResponse<String> get(URI base, String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static long fileDescriptors() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : Long.MAX_VALUE;
    }
}

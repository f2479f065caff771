package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request bodies held by a server with a small heap ({@code -Xmx320m}: a budget of about 15 MiB, their 2/19 of the 140 MiB
 * the old generation leaves for clients' parts with G1, see {@code HeapBudget}):
 * what counts is what has arrived, so announced bodies cost nothing, and bytes past the budget are refused
 * with 503 rather than let the heap run out.
 */
class RequestBodiesIT {
    private static final int LIMIT = 10 << 20;
    /** Over 16 KiB: it waits for a worker, so its body is counted. */
    private static final String EVENT = "{\"eventType\":\"mid\",\"payload\":\"" + "x".repeat(30_000) + "\"}";
    /** 150 events of 60 000 characters: about 9 MB. */
    private static final String BATCH = "[" + String.join(",", Collections.nCopies(150,
            "{\"eventType\":\"big\",\"payload\":\"" + "y".repeat(60_000) + "\"}")) + "]";

    @Test
    void bodiesInTransitStayWithinTheHeapBudget(@TempDir Path workingDirectory) throws Exception {
        List<RawHttp> connections = new ArrayList<>();
        ProcessBuilder command = ServerProcess.command(workingDirectory, "--server.port=0", "--server.host=127.0.0.1",
                "--store.mode=off", "--publish.max-request-bytes=" + LIMIT, "--server.body-timeout-seconds=120");
        command.command().replaceAll(argument -> argument.startsWith("-Xmx") ? "-Xmx320m" : argument);
        try (ServerProcess server = ServerProcess.start(command)) {
            URI base = server.awaitListening();
            int port = base.getPort();
            HttpClient client = HttpClient.newHttpClient();

            // Thirty clients announce 10 MiB each, 300 MiB in all, and send one byte: the others are served.
            for (int i = 0; i < 30; i++) {
                connections.add(RawHttp.connect(port).send(head(LIMIT) + "{"));
            }
            assertEquals(200, publish(client, base, "/eventhandler/publish", EVENT),
                    "announced bodies take nothing from the budget");

            // One sends 9 MiB and is held; another sends as much, and is refused as it passes the budget.
            String megabyte = " ".repeat(1 << 20);
            RawHttp held = RawHttp.connect(port).send(head(LIMIT));
            connections.add(held);
            for (int i = 0; i < 9; i++) {
                held.send(megabyte);
            }
            // A send returns once the bytes are in the socket's buffer: the first body must have been counted
            // whole (bar one counting step) before the second starts, or the second may be the one held.
            Await.until("the first body is counted", Duration.ofSeconds(20),
                    () -> heldBytes(base) >= 9 * megabyte.length() - (64 << 10));
            RawHttp refused = RawHttp.connect(port).send(head(LIMIT));
            connections.add(refused);
            for (int i = 0; i < 9 && !refused.answered(); i++) {
                refused.trySend(megabyte);
            }
            Await.until("the second is answered", Duration.ofSeconds(20), refused::answered);
            RawHttp.Answer answer = refused.answer(Duration.ofSeconds(10));
            assertEquals(503, answer.status(), answer.body());
            assertEquals("1", answer.header("Retry-After"));
            assertFalse(held.answered(), "the first body is still held");

            held.close();
            Await.until("a 9 MB batch is served once the held body is given back", Duration.ofSeconds(30),
                    () -> publish(client, base, "/eventhandler/publish/batch", BATCH) == 200);
        } finally {
            connections.forEach(RawHttp::close);
        }
    }

    private static double heldBytes(URI base) {
        try (TestClient scrape = new TestClient(base, null)) {
            return scrape.metric("eventhandler_request_bodies_held_bytes");
        }
    }

    private static String head(long contentLength) {
        return "POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + contentLength + "\r\n\r\n";
    }

    private static int publish(HttpClient client, URI base, String path, String json) {
        try {
            return client.send(HttpRequest.newBuilder(base.resolve(path))
                    .POST(HttpRequest.BodyPublishers.ofString(json)).header("Content-Type", "application/json")
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (java.io.IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}

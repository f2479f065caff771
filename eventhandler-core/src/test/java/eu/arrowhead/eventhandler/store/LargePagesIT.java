package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.SseStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The largest pages at the smallest heap: 400 events with payloads near {@code publish.max-payload-bytes} (24 MiB,
 * more than a third of {@code -Xmx64m}), read at once by eight loops of the largest {@code mgmt/events} page and by
 * subscribers resuming from the start. A page holds about a megabyte whatever its count, so no read exhausts the
 * heap: every page is answered (200, or 503 when the readers are busy), the pages add up to the whole log, and
 * every resuming subscriber receives every event. (A page of 1 000 such events used to be built whole, inside H2.)
 */
class LargePagesIT {
    private static final String TYPE = "large";
    private static final int EVENTS = 400;
    private static final int PAYLOAD_CHARS = 60_000;
    private static final int PER_REQUEST = 15;
    private static final int QUERY_LOOPS = 8;
    private static final int RESUMING = 4;
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path workingDirectory;

    @Test
    void theLargestPagesAtTheSmallestHeapAreServedWholeOnH2() throws Exception {
        try (H2Database database = new H2Database()) {
            largestPages(database);
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void theLargestPagesAtTheSmallestHeapAreServedWholeOnMariaDb() throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            largestPages(database);
        }
    }

    private void largestPages(TestDatabase database) throws Exception {
        try (ServerProcess server = ServerProcess.start(
                ServerProcess.smallestHeapCommand(workingDirectory, EventLoad.serverArguments(database)))) {
            URI base = server.awaitListening();
            publishLargeEvents(base);

            ExecutorService readers = Executors.newFixedThreadPool(QUERY_LOOPS + RESUMING);
            try {
                List<Future<Integer>> pagedCounts = new ArrayList<>();
                for (int i = 0; i < QUERY_LOOPS; i++) {
                    pagedCounts.add(readers.submit(() -> countByPages(base)));
                }
                List<Future<Integer>> resumedCounts = new ArrayList<>();
                for (int i = 0; i < RESUMING; i++) {
                    resumedCounts.add(readers.submit(() -> countByResuming(base)));
                }
                for (Future<Integer> count : pagedCounts) {
                    assertEquals(EVENTS, count.get(WAIT.toSeconds(), TimeUnit.SECONDS), "events paged through");
                }
                for (Future<Integer> count : resumedCounts) {
                    assertEquals(EVENTS, count.get(WAIT.toSeconds(), TimeUnit.SECONDS), "events replayed");
                }
            } catch (ExecutionException e) {
                throw new AssertionError(e.getCause().getMessage() + "; the server's output:\n" + server.output(), e);
            } finally {
                readers.shutdownNow();
            }
            assertFalse(server.output().contains("OutOfMemoryError"), server.output());
            assertEquals(200, EventLoad.query(base, "/eventhandler/echo"));
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
        }
    }

    private static void publishLargeEvents(URI base) throws IOException {
        String payload = "x".repeat(PAYLOAD_CHARS);
        try (CloseableHttpClient client = HttpClients.createDefault()) {
            for (int sent = 0; sent < EVENTS; ) {
                StringBuilder body = new StringBuilder("[");
                for (int i = 0; i < PER_REQUEST && sent + i < EVENTS; i++) {
                    body.append(i == 0 ? "" : ",").append("{\"eventType\":\"").append(TYPE).append("\",\"payload\":\"")
                            .append(payload).append("\"}");
                }
                HttpPost post = new HttpPost(base.resolve("/eventhandler/publish/batch"));
                post.setEntity(new StringEntity(body.append(']').toString(), ContentType.APPLICATION_JSON));
                String[] answer = client.execute(post, response -> new String[] {
                        Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
                if (answer[0].equals("200")) {
                    sent += JSON.readTree(answer[1]).get("ids").size();
                } else if (!answer[0].equals("503")) {
                    throw new AssertionError("publish/batch answered " + answer[0] + ": " + answer[1]);
                }
            }
        }
    }

    /** Follows the largest pages of mgmt/events from the start to the end; a 503 is asked again. */
    private static int countByPages(URI base) throws IOException {
        int count = 0;
        long afterId = 0;
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            while (true) {
                String[] answer = client.execute(new HttpGet(base.resolve("/eventhandler/mgmt/events?eventType=" + TYPE
                        + "&limit=1000&afterId=" + afterId)), response -> new String[] {
                        Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
                if (answer[0].equals("503")) {
                    // Retry-After says 1 s; sooner keeps the readers busy, which is the point.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                    continue;
                }
                assertEquals("200", answer[0], answer[1]);
                JsonNode page = JSON.readTree(answer[1]);
                count += page.get("data").size();
                if (page.get("nextAfterId") == null) {
                    return count;
                }
                afterId = page.get("nextAfterId").asLong();
            }
        }
    }

    /** Resumes from id 0 page after page, as a client does when a page ends its stream; a refusal is tried again. */
    private static int countByResuming(URI base) throws InterruptedException {
        HttpClient streams = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        int count = 0;
        String lastId = "0";
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (count < EVENTS && System.nanoTime() < deadline) {
            try (SseStream stream = SseStream.open(streams,
                    base.resolve("/eventhandler/events?eventType=" + TYPE + "&lastEventId=" + lastId))) {
                while (count < EVENTS) {
                    SseStream.Frame frame = stream.nextEvent(WAIT);
                    if (TYPE.equals(frame.event())) {
                        count++;
                        lastId = frame.id();
                    }
                }
            } catch (SseStream.StreamEndedException | SseStream.RefusedException e) {
                // a page ended the stream, or the readers were busy: resume after the last event received
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
        return count;
    }
}

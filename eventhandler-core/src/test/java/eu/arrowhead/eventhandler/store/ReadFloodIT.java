package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.util.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Eight anonymous loops of {@code mgmt/events} pages over a large log while a publisher sends 1 000 events/s in
 * batches of 100, at the smallest heap, in async mode: the writer never waits for a reader, so every batch is
 * acknowledged, nothing is dropped from the log and the store stays UP; each query is answered (200, or 503 at
 * once when every reader connection is busy), never a 500 and never after the pool's timeout. (Readers used to
 * hold every pooled connection: the writer could get none, the store said DOWN and dropped acknowledged events.)
 */
class ReadFloodIT {
    private static final String TYPE = "floodread";
    private static final int LOGGED = 200_000;
    private static final int QUERY_LOOPS = 8;
    private static final int BATCHES = 100;
    private static final int BATCH = 100;
    private static final long BATCH_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * Below store.timeout-seconds (10 s): a query that waited for the pool would take that long. Not tighter: on a
     * CI machine shared with other builds one page took 5.4 s, with 8 loops, a 64 MB heap and MariaDB on 2 cores.
     */
    private static final long LONGEST_QUERY_MILLIS = 9_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path workingDirectory;

    @Test
    void readsNeverStarveTheWriterOnH2() throws Exception {
        try (H2Database database = new H2Database()) {
            floodWhilePublishing(database);
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void readsNeverStarveTheWriterOnMariaDb() throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            floodWhilePublishing(database);
        }
    }

    private void floodWhilePublishing(TestDatabase database) throws Exception {
        try (ServerProcess server = ServerProcess.start(
                ServerProcess.smallestHeapCommand(workingDirectory, EventLoad.serverArguments(database)))) {
            URI base = server.awaitListening();
            EventLoad.seed(base, TYPE, LOGGED);

            AtomicBoolean running = new AtomicBoolean(true);
            Map<Integer, AtomicLong> queryAnswers = new ConcurrentHashMap<>();
            AtomicLong slowestQueryMillis = new AtomicLong();
            List<Thread> loops = new ArrayList<>();
            for (int i = 0; i < QUERY_LOOPS; i++) {
                Thread loop = new Thread(() -> queryUntilStopped(base, running, queryAnswers, slowestQueryMillis),
                        "mgmt-events-loop-" + i);
                loop.setDaemon(true);
                loop.start();
                loops.add(loop);
            }
            Set<Long> acknowledged = new HashSet<>();
            List<String> refusals = new ArrayList<>();
            boolean storeAlwaysUp = true;
            try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
                long next = System.nanoTime();
                for (int b = 0; b < BATCHES; b++) {
                    String[] answer = publishBatch(client, base, b);
                    if (answer[0].equals("200")) {
                        JSON.readTree(answer[1]).get("ids").forEach(id -> acknowledged.add(id.asLong()));
                    } else {
                        refusals.add(answer[0] + " " + answer[1]);
                    }
                    storeAlwaysUp &= storeStatus(client, base).equals("UP");
                    next += BATCH_INTERVAL_NANOS;
                    // Pacing, not synchronisation: 1 000 events/s, as the measurement.
                    LockSupport.parkNanos(next - System.nanoTime());
                }
            } finally {
                running.set(false);
                for (Thread loop : loops) {
                    loop.join(TimeUnit.SECONDS.toMillis(30));
                }
            }

            assertEquals(List.of(), refusals, "publishes refused while only reads loaded the store");
            assertEquals(BATCHES * BATCH, acknowledged.size());
            assertTrue(storeAlwaysUp, "the store said it was down while only reads loaded it");
            assertEquals(0.0, EventLogClient.metric(base, "eventhandler_store_dropped_events_total"));
            assertFalse(queryAnswers.containsKey(500), "answers of mgmt/events: " + queryAnswers);
            assertTrue(queryAnswers.keySet().stream().allMatch(status -> status == 200 || status == 503),
                    "answers of mgmt/events: " + queryAnswers);
            assertTrue(queryAnswers.containsKey(200), "answers of mgmt/events: " + queryAnswers);
            assertTrue(slowestQueryMillis.get() < LONGEST_QUERY_MILLIS,
                    "the slowest mgmt/events answer took " + slowestQueryMillis.get() + " ms");
            assertFalse(server.output().contains("OutOfMemoryError"), server.output());

            // Every acknowledged id came after the seed: the log is read back from the first of them.
            long firstAcknowledged = acknowledged.stream().mapToLong(Long::longValue).min().orElseThrow();
            List<Long> logged = EventLogClient.loggedIdsAfter(base, firstAcknowledged - 1);
            Set<Long> missing = new HashSet<>(acknowledged);
            logged.forEach(missing::remove);
            assertEquals(Set.of(), missing, "acknowledged but not in the log");
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
        }
    }

    private static String[] publishBatch(CloseableHttpClient client, URI base, int batch) throws IOException {
        StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < BATCH; i++) {
            body.append(i == 0 ? "" : ",").append("{\"eventType\":\"").append(TYPE).append("\",\"payload\":\"live ")
                    .append(batch).append('-').append(i).append("\"}");
        }
        HttpPost post = new HttpPost(base.resolve("/eventhandler/publish/batch"));
        post.setEntity(new StringEntity(body.append(']').toString(), ContentType.APPLICATION_JSON));
        return client.execute(post, response -> new String[] {
                Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
    }

    private static String storeStatus(CloseableHttpClient client, URI base) throws IOException {
        String body = client.execute(new HttpGet(base.resolve("/eventhandler/mgmt/health")),
                response -> EntityUtils.toString(response.getEntity()));
        JsonNode store = JSON.readTree(body).get("store");
        return store == null ? "none" : store.get("status").asText();
    }

    private static void queryUntilStopped(URI base, AtomicBoolean running, Map<Integer, AtomicLong> answers,
                                          AtomicLong slowestMillis) {
        RequestConfig timeouts = RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(60)).build();
        try (CloseableHttpClient client = HttpClients.custom().setDefaultRequestConfig(timeouts)
                .disableAutomaticRetries().build()) {
            while (running.get()) {
                long start = System.nanoTime();
                int status = client.execute(new HttpGet(base.resolve("/eventhandler/mgmt/events?eventType=" + TYPE
                        + "&limit=1000")), response -> {
                    EntityUtils.consume(response.getEntity());
                    return response.getCode();
                });
                slowestMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                answers.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
                if (status == 503) {
                    // As a client honouring Retry-After would, but sooner: the flood must go on.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                }
            }
        } catch (IOException e) {
            answers.computeIfAbsent(-1, s -> new AtomicLong()).incrementAndGet();
        }
    }
}

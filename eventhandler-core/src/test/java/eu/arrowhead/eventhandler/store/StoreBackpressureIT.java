package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * Four connections flood a server with a 64 MiB heap with batches of 1 000 events, faster than the event
 * store's writer can write them (async mode, a healthy database): every publish is answered 200 or 503, the
 * server does not run out of memory, and every acknowledged event is in the log afterwards.
 */
class StoreBackpressureIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int CONNECTIONS = 4;
    private static final int BATCHES_PER_CONNECTION = 25;
    private static final int EVENTS_PER_BATCH = 1_000;
    private static final String PAYLOAD = "x".repeat(200);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aFloodOfBatchesIsRefusedWith503NotDroppedFromTheLogOnH2(@TempDir Path workingDirectory) throws Exception {
        try (H2Database database = new H2Database()) {
            flood(database, workingDirectory);
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void aFloodOfBatchesIsRefusedWith503NotDroppedFromTheLogOnMariaDb(@TempDir Path workingDirectory)
            throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            flood(database, workingDirectory);
        }
    }

    private static void flood(TestDatabase database, Path workingDirectory) throws Exception {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.host=127.0.0.1", "--store.mode=async",
                "--store.buffer-events=10000"));
        database.settings().forEach((key, value) -> args.add("--" + key + "=" + value));
        ProcessBuilder command = ServerProcess.command(workingDirectory, args.toArray(String[]::new));
        command.command().replaceAll(argument -> argument.startsWith("-Xmx") ? "-Xmx64m" : argument);

        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        AtomicInteger refused = new AtomicInteger();
        try (ServerProcess server = ServerProcess.start(command)) {
            URI base = server.awaitListening();
            ExecutorService connections = Executors.newFixedThreadPool(CONNECTIONS);
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (int c = 0; c < CONNECTIONS; c++) {
                    runs.add(connections.submit(() -> {
                        publishBatches(base, acknowledged, refused);
                        return null;
                    }));
                }
                for (Future<?> run : runs) {
                    run.get(5, TimeUnit.MINUTES);
                }
            } finally {
                connections.shutdownNow();
            }
            System.out.printf("flood: %d events acknowledged, %d batches refused with 503%n", acknowledged.size(),
                    refused.get());
            assertTrue(server.process().isAlive(), "the server survives the flood:\n" + server.output());
            assertFalse(server.output().contains("OutOfMemoryError"), server.output());
            assertTrue(refused.get() > 0, "the flood outran the writer, which refused publishes");
            assertEquals(refused.get(), EventLogClient.metric(base, "eventhandler_store_refused_publishes_total"));
            assertEquals(0, EventLogClient.metric(base, "eventhandler_store_dropped_events_total"), "a healthy log drops nothing");

            Await.until("the writer caught up", WAIT,
                    () -> EventLogClient.metric(base, "eventhandler_store_buffered_events") == 0);
            Set<Long> missing = new HashSet<>(acknowledged);
            EventLogClient.loggedIds(base).forEach(missing::remove);
            assertTrue(missing.isEmpty(), missing.size() + " acknowledged events are not in the log");
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
        }
    }

    private static void publishBatches(URI base, Set<Long> acknowledged, AtomicInteger refused) throws IOException {
        StringBuilder batch = new StringBuilder("[");
        for (int i = 0; i < EVENTS_PER_BATCH; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"eventType\":\"flood\",\"payload\":\"").append(PAYLOAD)
                    .append("\",\"metaData\":{\"n\":\"").append(i).append("\"}}");
        }
        String body = batch.append(']').toString();
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            for (int i = 0; i < BATCHES_PER_CONNECTION; i++) {
                HttpPost post = new HttpPost(base.resolve("/eventhandler/publish/batch"));
                post.setEntity(new StringEntity(body, ContentType.APPLICATION_JSON));
                String[] answer = client.execute(post, response -> new String[] {
                        Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity()),
                        response.getFirstHeader("Retry-After") == null ? "" : response.getFirstHeader("Retry-After").getValue()});
                switch (answer[0]) {
                    case "200" -> JSON.readTree(answer[1]).get("ids").forEach(id -> acknowledged.add(id.asLong()));
                    case "503" -> {
                        assertFalse(answer[2].isEmpty(), "a 503 says when to come back");
                        refused.incrementAndGet();
                    }
                    default -> throw new AssertionError("a batch was answered " + answer[0] + ": " + answer[1]);
                }
            }
        }
    }

}

package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
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
import java.util.concurrent.atomic.AtomicBoolean;
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
 * {@code kill -9} in sync mode while four publishers publish: after the restart every id that got a 200 is
 * in the log, and a subscriber resuming from 0 receives the whole log in order.
 */
class StoreCrashIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PUBLISHERS = 4;
    private static final int ACKNOWLEDGED_BEFORE_THE_CRASH = 1_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aCrashLosesNoAcknowledgedEventOnH2(@TempDir Path workingDirectory) throws Exception {
        try (H2Database database = new H2Database()) {
            crashAndRestart(database, workingDirectory);
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void aCrashLosesNoAcknowledgedEventOnMariaDb(@TempDir Path workingDirectory) throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            crashAndRestart(database, workingDirectory);
        }
    }

    private static void crashAndRestart(TestDatabase database, Path workingDirectory) throws Exception {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.host=127.0.0.1",
                "--store.mode=sync", "--store.replay-page-events=1000000"));
        database.settings().forEach((key, value) -> args.add("--" + key + "=" + value));

        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        try (ServerProcess server = ServerProcess.start(workingDirectory, args.toArray(String[]::new))) {
            URI base = server.awaitListening();
            AtomicBoolean running = new AtomicBoolean(true);
            ExecutorService publishers = Executors.newFixedThreadPool(PUBLISHERS);
            List<Future<?>> runs = new ArrayList<>();
            for (int p = 0; p < PUBLISHERS; p++) {
                runs.add(publishers.submit(() -> publishUntilTheServerDies(base, running, acknowledged)));
            }
            Await.until(ACKNOWLEDGED_BEFORE_THE_CRASH + " acknowledged publishes", WAIT,
                    () -> acknowledged.size() >= ACKNOWLEDGED_BEFORE_THE_CRASH);
            server.kill();
            running.set(false);
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS);
            }
            publishers.shutdownNow();
        }

        try (ServerProcess server = ServerProcess.start(workingDirectory, args.toArray(String[]::new))) {
            URI base = server.awaitListening();
            List<Long> logged = loggedIds(base);
            Set<Long> missing = new HashSet<>(acknowledged);
            logged.forEach(missing::remove);
            assertTrue(missing.isEmpty(), "acknowledged but not in the log: " + missing);

            HttpClient streams = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            try (SseStream stream = SseStream.open(streams, base.resolve("/eventhandler/events?eventType=crash&lastEventId=0"))) {
                List<Frame> replayed = stream.events(logged.size(), WAIT);
                for (int i = 0; i < logged.size(); i++) {
                    assertEquals(Long.toString(logged.get(i)), replayed.get(i).id(), "event " + i);
                }
            }
            server.terminate();
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
        }
    }

    private static void publishUntilTheServerDies(URI base, AtomicBoolean running, Set<Long> acknowledged) {
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            for (int i = 0; running.get(); i++) {
                HttpPost post = new HttpPost(base.resolve("/eventhandler/publish"));
                post.setEntity(new StringEntity("{\"eventType\":\"crash\",\"payload\":\"" + i + "\"}",
                        ContentType.APPLICATION_JSON));
                String[] answer = client.execute(post, response -> new String[] {
                        Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
                if (answer[0].equals("200")) {
                    acknowledged.add(JSON.readTree(answer[1]).get("id").asLong());
                }
            }
        } catch (IOException e) {
            // the server was killed: what was acknowledged until now is what counts
        }
    }

    private static List<Long> loggedIds(URI base) throws IOException {
        List<Long> ids = new ArrayList<>();
        try (CloseableHttpClient client = HttpClients.createDefault()) {
            long afterId = 0;
            while (true) {
                HttpGet get = new HttpGet(base.resolve("/eventhandler/mgmt/events?afterId=" + afterId));
                String body = client.execute(get, response -> EntityUtils.toString(response.getEntity()));
                JsonNode page = JSON.readTree(body);
                page.get("data").forEach(event -> ids.add(event.get("id").asLong()));
                if (page.get("nextAfterId") == null) {
                    return ids;
                }
                afterId = page.get("nextAfterId").asLong();
            }
        }
    }
}

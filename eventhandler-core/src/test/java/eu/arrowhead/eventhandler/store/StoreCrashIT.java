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
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
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
 * {@code kill -9} while four publishers publish, then a restart.
 *
 * <p>Sync mode: every id that got a 200 is in the log, and a subscriber resuming from 0 receives the whole log
 * in order, with no notice. Async mode, at a steady rate of about 1 250 events/s: what a crash loses lies in
 * one hole, from the last id committed to the last id the next run skips (exactly {@code store.buffer-events}
 * ids), and a subscriber resuming from 0 receives every event the log holds with a replay-gap notice for each
 * hole where it lies. The system property {@code eventhandler.crash.rounds} crashes the same log that many
 * times (docs/reliability.md has the figures of such runs); each round prints what it lost.
 */
class StoreCrashIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PUBLISHERS = 4;
    private static final int ACKNOWLEDGED_BEFORE_THE_CRASH = 1_000;
    /** Each publisher's pace in async mode: 4 x 312.5 = 1 250 events/s, the rate of the measurement. */
    private static final long PUBLISH_INTERVAL_NANOS = TimeUnit.MICROSECONDS.toNanos(3_200);
    private static final int LAG_BOUND = 10_000;
    private static final Pattern SEQUENCE_START = Pattern.compile("the sequence continues after (\\d+)");
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aCrashLosesNoAcknowledgedEventOnH2(@TempDir Path workingDirectory) throws Exception {
        try (H2Database database = new H2Database()) {
            crashAndRestartInSyncMode(database, workingDirectory);
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void aCrashLosesNoAcknowledgedEventOnMariaDb(@TempDir Path workingDirectory) throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            crashAndRestartInSyncMode(database, workingDirectory);
        }
    }

    @Test
    void inAsyncModeACrashLosesOneBoundedHoleThatEveryResumeIsToldOfOnH2(@TempDir Path workingDirectory)
            throws Exception {
        try (H2Database database = new H2Database()) {
            crashAndRestartInAsyncMode(database, workingDirectory, "H2");
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void inAsyncModeACrashLosesOneBoundedHoleThatEveryResumeIsToldOfOnMariaDb(@TempDir Path workingDirectory)
            throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            crashAndRestartInAsyncMode(database, workingDirectory, "MariaDB");
        }
    }

    private static String[] arguments(TestDatabase database, String mode) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.host=127.0.0.1",
                "--store.mode=" + mode, "--store.replay-page-events=1000000", "--store.buffer-events=" + LAG_BOUND));
        database.settings().forEach((key, value) -> args.add("--" + key + "=" + value));
        return args.toArray(String[]::new);
    }

    private static void crashAndRestartInSyncMode(TestDatabase database, Path workingDirectory) throws Exception {
        String[] args = arguments(database, "sync");
        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
            publishUntilKilled(server, server.awaitListening(), 0, acknowledged);
        }

        try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
            URI base = server.awaitListening();
            List<Long> logged = EventLogClient.loggedIds(base);
            Set<Long> missing = new HashSet<>(acknowledged);
            logged.forEach(missing::remove);
            assertTrue(missing.isEmpty(), "acknowledged but not in the log: " + missing);

            List<Frame> replayed = resumeFromZero(base, logged.size());
            for (int i = 0; i < logged.size(); i++) {
                assertEquals(Long.toString(logged.get(i)), replayed.get(i).id(), "event " + i);
            }
            stop(server);
        }
    }

    private static void crashAndRestartInAsyncMode(TestDatabase database, Path workingDirectory, String name)
            throws Exception {
        String[] args = arguments(database, "async");
        int rounds = Integer.getInteger("eventhandler.crash.rounds", 1);
        List<String> holes = new ArrayList<>();
        Set<Long> acknowledged = Set.of();
        long maxBuffered = 0;
        for (int round = 0; round <= rounds; round++) {
            try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
                long start = Long.parseLong(server.await(SEQUENCE_START, 60).group(1));
                URI base = server.awaitListening();
                if (round > 0) {
                    List<Long> logged = EventLogClient.loggedIds(base);
                    long lastLogged = logged.isEmpty() ? 0 : logged.get(logged.size() - 1);
                    TreeSet<Long> lost = new TreeSet<>(acknowledged);
                    logged.forEach(lost::remove);
                    System.out.printf("crash %d on %s: %d publishes acknowledged, %d of them not in the log;"
                                    + " at most %d events waited to be written; hole %d-%d%n", round, name,
                            acknowledged.size(), lost.size(), maxBuffered, lastLogged + 1, start);
                    // Above the lag bound, and above the id mark, which the writer keeps at most a block (the
                    // buffer's size) ahead of the ids it gave.
                    assertTrue(start >= lastLogged + LAG_BOUND && start <= lastLogged + 2 * LAG_BOUND,
                            "the ids skipped after the crash: " + lastLogged + "-" + start);
                    assertTrue(lost.isEmpty() || lost.first() > lastLogged && lost.last() <= start,
                            "every acknowledged event that is not in the log lies in the hole: " + lost);
                    holes.add("gap " + lastLogged + "-" + start);
                    List<String> expected = ResumeTranscript.expected(logged, start);
                    assertEquals(holes, expected.stream().filter(frame -> frame.startsWith("gap")).toList(),
                            "the log holds every id but the holes of the crashes");
                    assertEquals(expected, resumed(base, expected.size()));
                }
                if (round == rounds) {
                    stop(server);
                    return;
                }
                acknowledged = ConcurrentHashMap.newKeySet();
                maxBuffered = publishUntilKilled(server, base, PUBLISH_INTERVAL_NANOS, acknowledged);
            }
        }
    }

    /**
     * Publishes from four connections, each at {@code intervalNanos} (0 for as fast as it can), until
     * {@value #ACKNOWLEDGED_BEFORE_THE_CRASH} publishes are acknowledged, then kills the server.
     *
     * @return the most events the store's buffer held at once, as its metric showed
     */
    private static long publishUntilKilled(ServerProcess server, URI base, long intervalNanos, Set<Long> acknowledged)
            throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService publishers = Executors.newFixedThreadPool(PUBLISHERS + 1);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int p = 0; p < PUBLISHERS; p++) {
                runs.add(publishers.submit(() -> publishUntilTheServerDies(base, running, intervalNanos, acknowledged)));
            }
            Future<Long> maxBuffered = publishers.submit(() -> maxBufferedUntilTheServerDies(base, running));
            Await.until(ACKNOWLEDGED_BEFORE_THE_CRASH + " acknowledged publishes", WAIT,
                    () -> acknowledged.size() >= ACKNOWLEDGED_BEFORE_THE_CRASH);
            server.kill();
            running.set(false);
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS);
            }
            return maxBuffered.get(30, TimeUnit.SECONDS);
        } finally {
            publishers.shutdownNow();
        }
    }

    private static void publishUntilTheServerDies(URI base, AtomicBoolean running, long intervalNanos,
                                                  Set<Long> acknowledged) {
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            long next = System.nanoTime();
            for (int i = 0; running.get(); i++) {
                HttpPost post = new HttpPost(base.resolve("/eventhandler/publish"));
                post.setEntity(new StringEntity("{\"eventType\":\"crash\",\"payload\":\"" + i + "\"}",
                        ContentType.APPLICATION_JSON));
                String[] answer = client.execute(post, response -> new String[] {
                        Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
                if (answer[0].equals("200")) {
                    acknowledged.add(JSON.readTree(answer[1]).get("id").asLong());
                }
                next += intervalNanos;
                // Pacing, not synchronisation: a steady rate, as the measurement asks.
                LockSupport.parkNanos(next - System.nanoTime());
            }
        } catch (IOException e) {
            // the server was killed: what was acknowledged until now is what counts
        }
    }

    private static long maxBufferedUntilTheServerDies(URI base, AtomicBoolean running) {
        long max = 0;
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            while (running.get()) {
                String metrics = client.execute(new HttpGet(base.resolve("/metrics")),
                        response -> EntityUtils.toString(response.getEntity()));
                for (String line : metrics.split("\n")) {
                    if (line.startsWith("eventhandler_store_buffered_events ")) {
                        max = Math.max(max, (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1)));
                    }
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        } catch (IOException e) {
            // the server was killed
        }
        return max;
    }

    private static List<String> resumed(URI base, int frames) throws InterruptedException {
        return resumeFromZero(base, frames).stream().map(ResumeTranscript::line).toList();
    }

    private static List<Frame> resumeFromZero(URI base, int frames) throws InterruptedException {
        HttpClient streams = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (SseStream stream = SseStream.open(streams, base.resolve("/eventhandler/events?eventType=crash&lastEventId=0"))) {
            return stream.events(frames, WAIT);
        }
    }

    private static void stop(ServerProcess server) throws InterruptedException {
        server.terminate();
        assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
    }
}

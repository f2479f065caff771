package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RefusedStream;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TcpProxy;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A resume that needs the event store while the database is cut off or hangs, under a publish load: it is
 * refused for now (the refusal stream, so that every client comes back), promptly, never cut off without an
 * answer, and the same resume once the database is back delivers everything.
 */
class ResumeDuringOutageTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The database's timeout: a resume that waited for it would take this long. */
    private static final int STORE_TIMEOUT_SECONDS = 12;
    private static final int LOGGED = 20;
    /** Most events the load publishes, so that it stops by itself. */
    private static final int MAX_LOAD_EVENTS = 50_000;

    private static TestDatabase database(String name) {
        if (name.equals("mariadb")) {
            Assumptions.assumeTrue(!System.getenv().getOrDefault(MariaDbDatabase.URL_VARIABLE, "").isBlank(), "no MariaDB configured");
            return new MariaDbDatabase();
        }
        return new H2Database();
    }

    private static TestServer start(TestDatabase database, TcpProxy proxy, String... keyValues) {
        Map<String, String> settings = new HashMap<>(database.settingsVia(proxy.port()));
        settings.put("store.mode", "async");
        settings.put("store.timeout-seconds", Integer.toString(STORE_TIMEOUT_SECONDS));
        settings.put("replay.window-events", "5");
        settings.put("subscriber.queue-max-bytes", "4096");
        for (int i = 0; i < keyValues.length; i += 2) {
            settings.put(keyValues[i], keyValues[i + 1]);
        }
        return TestServer.start(settings.entrySet().stream()
                .flatMap(entry -> Stream.of(entry.getKey(), entry.getValue())).toArray(String[]::new));
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "mariadb"})
    void aResumeWhileTheStoreIsKnownDownIsRefusedAtOnceAndServedInFullOnceItIsBack(String name) throws Exception {
        try (TestDatabase database = database(name);
             TcpProxy proxy = new TcpProxy(database.host(), database.port());
             TestServer server = start(database, proxy)) {
            List<Long> ids = publishLogged(server);
            proxy.cut();
            Await.until("the store finds the database down", WAIT, () -> {
                ids.add(server.publish("outage", "during"));
                return server.get("/eventhandler/mgmt/health").statusCode() == 503;
            });

            ErrorMessage refusal;
            long took;
            try (Load load = Load.start(server, ids)) {
                long start = System.nanoTime();
                refusal = RefusedStream.request(server.port(), "?eventType=outage&lastEventId=" + ids.get(1), 1000);
                took = System.nanoTime() - start;
            }
            assertTrue(refusal.errorMessage().contains("event store"), refusal.errorMessage());
            assertTrue(took < TimeUnit.SECONDS.toNanos(STORE_TIMEOUT_SECONDS) / 2,
                    "refused after " + took / 1_000_000 + " ms, as if it had waited for the database");

            proxy.restore();
            Await.until("the store writes again", WAIT, () -> server.get("/eventhandler/mgmt/health").statusCode() == 200);
            assertEverythingAfterTheSecondIsResumed(server, ids);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "mariadb"})
    void aResumeWhoseReadWaitsForTheDatabaseIsRefusedWhenLiveEventsOutgrowItsQueue(String name) throws Exception {
        try (TestDatabase database = database(name);
             TcpProxy proxy = new TcpProxy(database.host(), database.port());
             TestServer server = start(database, proxy)) {
            List<Long> ids = publishLogged(server);
            // The database stops answering while nothing is written: the store does not know yet, so the
            // resume's read waits for the database while live events queue up for the subscriber.
            proxy.hang();
            long start = System.nanoTime();
            CompletableFuture<ErrorMessage> refusal = CompletableFuture.supplyAsync(
                    () -> RefusedStream.request(server.port(), "?eventType=outage&lastEventId=" + ids.get(1), 1000));
            try (Load load = Load.start(server, ids)) {
                ErrorMessage refused = refusal.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                long took = System.nanoTime() - start;
                assertTrue(refused.errorMessage().contains("resume again later"), refused.errorMessage());
                assertTrue(took < TimeUnit.SECONDS.toNanos(STORE_TIMEOUT_SECONDS) / 2,
                        "refused after " + took / 1_000_000 + " ms, as if it had waited for the database");
            }
            proxy.restore();
            assertEverythingAfterTheSecondIsResumed(server, ids);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "mariadb"})
    void aResumeStillWaitingForTheDatabaseAtShutdownIsRefusedForNow(String name) throws Exception {
        try (TestDatabase database = database(name);
             TcpProxy proxy = new TcpProxy(database.host(), database.port());
             TestServer server = start(database, proxy)) {
            List<Long> ids = publishLogged(server);
            proxy.hang();
            CompletableFuture<ErrorMessage> refusal = CompletableFuture.supplyAsync(
                    () -> RefusedStream.request(server.port(), "?eventType=outage&lastEventId=" + ids.get(1), 1000));
            Await.until("the resume waits for its read", WAIT,
                    () -> server.topic("outage").orElseThrow().subscribers() == 1);
            CompletableFuture<Boolean> stopping = CompletableFuture.supplyAsync(() -> server.server().shutdown());
            ErrorMessage refused = refusal.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(refused.errorMessage().contains("shutting down"), refused.errorMessage());
            // The database back, the stop does not wait for it to record the clean stop.
            proxy.restore();
            stopping.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /**
     * Resumes whose reads wait for the database (it hangs, unknown to the store) are open meanwhile: each gets its
     * {@code :ok} at once and heartbeats after, so that no client's read timeout fires. One client holds at
     * most {@code store.replay-queue-per-client} places: its next resume is refused at once; the waiting ones
     * are served in full once the database answers.
     */
    @ParameterizedTest
    @ValueSource(strings = {"h2", "mariadb"})
    void resumesWaitingForAReaderAreKeptAliveAndOneClientHoldsOnlyItsShare(String name) throws Exception {
        int share = 3;
        try (TestDatabase database = database(name);
             TcpProxy proxy = new TcpProxy(database.host(), database.port());
             TestServer server = start(database, proxy, "store.replay-queue-per-client", Integer.toString(share),
                     "sse.heartbeat-seconds", "1", "subscriber.queue-max-bytes", "1048576")) {
            List<Long> ids = publishLogged(server);
            proxy.hang();
            List<SseStream> waiting = new ArrayList<>();
            try {
                for (int i = 0; i < share; i++) {
                    // open() fails unless the stream's first frame, within 5 s, is a comment: its :ok.
                    waiting.add(server.subscribe("?eventType=outage", "Last-Event-ID", Long.toString(ids.get(1))));
                }
                for (SseStream stream : waiting) {
                    Frame heartbeat = stream.next(Duration.ofSeconds(10));
                    assertTrue(heartbeat != null && heartbeat.isComment(), "a heartbeat while waiting: " + heartbeat);
                }
                long start = System.nanoTime();
                ErrorMessage refused = RefusedStream.request(server.port(),
                        "?eventType=outage&lastEventId=" + ids.get(1), 1000);
                assertTrue(refused.errorMessage().contains("store.replay-queue-per-client"), refused.errorMessage());
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(STORE_TIMEOUT_SECONDS) / 2,
                        "refused at once, not after waiting for the database");

                proxy.restore();
                List<Long> expected = ids.subList(2, ids.size());
                for (SseStream stream : waiting) {
                    List<Long> received = new ArrayList<>();
                    for (Frame frame : stream.events(expected.size(), WAIT)) {
                        received.add(Long.parseLong(frame.id()));
                    }
                    assertEquals(expected, received, "the waiting resume got every event after its resume point");
                }
            } finally {
                waiting.forEach(SseStream::close);
            }
        }
    }

    /** Publishes {@value #LOGGED} events and waits until the log holds them; returns their ids, to add to. */
    private static List<Long> publishLogged(TestServer server) throws InterruptedException {
        List<Long> ids = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < LOGGED; i++) {
            ids.add(server.publish("outage", "before-" + i));
        }
        Await.until(LOGGED + " events in the log", WAIT,
                () -> server.metric("eventhandler_store_written_events_total") == LOGGED);
        return ids;
    }

    /**
     * Resumes after the second event as a client does: again while refused (a read may still fail on a
     * connection the pool held through the outage), and again from its last event after each page (a page holds
     * at most half of this test's small subscriber queue).
     */
    private static void assertEverythingAfterTheSecondIsResumed(TestServer server, List<Long> ids) throws Exception {
        List<Long> expected = List.copyOf(ids.subList(2, ids.size()));
        List<Long> received = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (received.size() < expected.size() && System.nanoTime() < deadline) {
            String resumeFrom = Long.toString(received.isEmpty() ? ids.get(1) : received.get(received.size() - 1));
            try (SseStream stream = server.subscribe("?eventType=outage", "Last-Event-ID", resumeFrom)) {
                while (received.size() < expected.size()) {
                    Frame frame = stream.nextEvent(WAIT);
                    if ("outage".equals(frame.event())) {
                        received.add(Long.parseLong(frame.id()));
                    }
                }
            } catch (SseStream.RefusedException | SseStream.StreamEndedException e) {
                // refused for now, or a page ended: resume again
            }
        }
        assertEquals(expected, received, "every event after the resume point, once, in order");
    }

    /** Publishes on a thread of its own until closed, or {@value #MAX_LOAD_EVENTS} events. */
    private static final class Load implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong published = new AtomicLong();
        private final Thread thread;

        private Load(TestServer server, List<Long> ids) {
            thread = new Thread(() -> {
                while (running.get() && published.incrementAndGet() <= MAX_LOAD_EVENTS) {
                    ids.add(server.publish("outage", "load"));
                }
            }, "publish-load");
        }

        static Load start(TestServer server, List<Long> ids) {
            Load load = new Load(server, ids);
            load.thread.start();
            return load;
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(WAIT.toMillis());
        }
    }
}

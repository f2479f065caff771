package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.store.LogExport;
import eu.arrowhead.eventhandler.testing.MariaDbTurn;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.api.MessageInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A single node's log moved into a cluster's stream with its ids ({@link LogMigration}), on H2 and, when
 * {@code EVENTHANDLER_TEST_MYSQL_URL} names one, on MariaDB: a run stopped after two pages (and a placeholder it
 * left) resumes without loss or duplicate, ids the log lacks are no messages of the stream, a cluster node on the stream replays from an old id
 * with the original ids and payloads and goes on after the single node's last id, and a stream that is no longer
 * this log's copy is refused.
 */
class LogMigrationTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MYSQL_URL = System.getenv("EVENTHANDLER_TEST_MYSQL_URL");
    private static final int EVENTS = 30;
    /** Retention deleted 1-3, an outage lost 12-14, and the last event given out (30) is not in the log. */
    private static final Set<Long> NOT_IN_LOG = Set.of(1L, 2L, 3L, 12L, 13L, 14L, 30L);
    @TempDir
    static Path directory;
    private static NatsCluster nats;

    @BeforeAll
    static void start() throws Exception {
        nats = NatsCluster.start(directory, 1);
    }

    @AfterAll
    static void stop() throws Exception {
        TestServer.closeAll(nats);
    }

    static Stream<String> databases() {
        return MYSQL_URL == null || MYSQL_URL.isBlank() ? Stream.of("h2") : Stream.of("h2", "mariadb");
    }

    @ParameterizedTest
    @MethodSource("databases")
    void aStoppedRunResumesAndANodeReplaysTheOldIds(String database) throws Exception {
        if (!database.equals("mariadb")) {
            migrateStopResumeAndReplay(database);
            return;
        }
        try (MariaDbTurn turn = MariaDbTurn.take()) {
            migrateStopResumeAndReplay(database);
        }
    }

    private void migrateStopResumeAndReplay(String database) throws Exception {
        Map<String, String> store = store(database);
        Map<Long, String> payloads = singleNodeLog(store);

        Map<String, String> settings = new LinkedHashMap<>(store);
        settings.put("cluster.nats-urls", nats.urls());
        settings.put("cluster.stream", "MIGRATED_" + database.toUpperCase());
        settings.put("cluster.subject-prefix", "migrated." + database);
        EventHandlerConfig config = ConfigLoader.loadForMigration(settings.entrySet().stream()
                .map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new), Map.of());
        try (LogExport log = LogExport.open(config)) {
            int[] pages = {0};
            LogMigration stopped = new LogMigration(config.cluster(), log, 4, () -> {
                if (++pages[0] == 2) {
                    throw new IllegalStateException("stopped after two pages");
                }
            });
            assertThrows(IllegalStateException.class, stopped::run);
            // Pages of 4 from id 4: 4-7 and 8-11 (with no event at 1-3) are in the stream, no more.
            assertEquals(11, streamLastId(config));
            leavePlaceholder(config, 12);
            assertEquals(payloads.size() - 8, LogMigration.run(config.cluster(), log, 4));
            assertEquals(0, LogMigration.run(config.cluster(), log, 4), "a finished migration copies nothing more");
        }
        assertStreamHolds(config, payloads);

        try (TestServer node = TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                "cluster.stream", config.cluster().stream(), "cluster.subject-prefix",
                config.cluster().subjectPrefix(), "cluster.node-name", "migrated-" + database)) {
            try (SseStream stream = node.subscribe("?eventType=m.even&eventType=m.odd&eventType=m.live",
                    "Last-Event-ID", "5")) {
                long live = node.publish("m.live", "after");
                assertEquals(EVENTS + 1, live, "the cluster's ids go on after the single node's last");
                Map<Long, String> received = new TreeMap<>();
                for (Frame frame : stream.events(payloads.size() - 2 + 1, WAIT)) {
                    JsonNode event = JSON.readTree(frame.data());
                    assertEquals(frame.id(), event.get("id").asText());
                    received.put(Long.parseLong(frame.id()), event.get("payload").asText());
                }
                Map<Long, String> expected = new TreeMap<>(payloads);
                expected.keySet().removeIf(id -> id <= 5);
                expected.put(live, "after");
                assertEquals(expected, received);
            }
        }
        try (LogExport log = LogExport.open(config)) {
            SetupRefused refused = assertThrows(SetupRefused.class, () -> LogMigration.run(config.cluster(), log, 4));
            assertTrue(refused.getMessage().contains("after the last id the log gave out"), refused.getMessage());
        }
    }

    /** The store's keys of a new log on this database. */
    private static Map<String, String> store(String database) throws SQLException {
        Map<String, String> store = new LinkedHashMap<>();
        store.put("store.mode", "sync");
        store.put("store.id-mark-file", directory.resolve(database + ".ids").toString());
        if (database.equals("h2")) {
            store.put("store.url", "jdbc:h2:file:" + directory.resolve("h2/eventhandler"));
            return store;
        }
        store.put("store.url", MYSQL_URL);
        store.put("store.user", System.getenv().getOrDefault("EVENTHANDLER_TEST_MYSQL_USER", "root"));
        try (java.sql.Connection connection = jdbc(store); Statement statement = connection.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet found = statement.executeQuery("SELECT table_name FROM information_schema.tables"
                    + " WHERE table_schema = DATABASE()")) {
                while (found.next()) {
                    tables.add(found.getString(1));
                }
            }
            for (String table : tables) {
                statement.execute("DROP TABLE " + table);
            }
        }
        return store;
    }

    private static java.sql.Connection jdbc(Map<String, String> store) throws SQLException {
        return DriverManager.getConnection(store.get("store.url"), store.getOrDefault("store.user", "sa"), "");
    }

    /**
     * A single node's log of {@value #EVENTS} events of two types, stopped cleanly, then cut as retention and an
     * outage would have: ids 1-3, 12-14 and 30 deleted.
     *
     * @return the payloads of the events it holds, by id
     */
    private static Map<Long, String> singleNodeLog(Map<String, String> store) throws SQLException {
        List<String> keyValues = new ArrayList<>();
        store.forEach((key, value) -> {
            keyValues.add(key);
            keyValues.add(value);
        });
        Map<Long, String> payloads = new TreeMap<>();
        try (TestServer single = TestServer.start(keyValues.toArray(String[]::new))) {
            for (int i = 1; i <= EVENTS; i++) {
                long id = single.publish(i % 2 == 0 ? "m.even" : "m.odd", "payload " + i);
                assertEquals(i, id);
                payloads.put(id, "payload " + i);
            }
        }
        try (java.sql.Connection connection = jdbc(store); Statement statement = connection.createStatement()) {
            statement.executeUpdate("DELETE FROM eh_event WHERE id IN (1, 2, 3, 12, 13, 14, 30)");
        }
        payloads.keySet().removeAll(NOT_IN_LOG);
        return payloads;
    }

    /** What a run stopped between storing the placeholder of an id the log lacks and deleting it leaves. */
    private static void leavePlaceholder(EventHandlerConfig config, long id) throws Exception {
        try (Connection connection = Nats.connect(nats.urls())) {
            StreamMessages messages = new StreamMessages(config.cluster().subjectPrefix());
            assertEquals(id, connection.jetStream().publish(messages.fillerSubject(), new byte[0]).getSeqno());
        }
    }

    private static long streamLastId(EventHandlerConfig config) throws Exception {
        try (Connection connection = Nats.connect(nats.urls())) {
            return connection.jetStreamManagement().getStreamInfo(config.cluster().stream()).getStreamState()
                    .getLastSequence();
        }
    }

    /** The stream holds the log's events under their ids, and no message under an id the log lacks. */
    private static void assertStreamHolds(EventHandlerConfig config, Map<Long, String> payloads) throws Exception {
        try (Connection connection = Nats.connect(nats.urls())) {
            JetStreamManagement management = connection.jetStreamManagement();
            String stream = config.cluster().stream();
            assertEquals(EVENTS, management.getStreamInfo(stream).getStreamState().getLastSequence());
            assertEquals(payloads.size(), management.getStreamInfo(stream).getStreamState().getMsgCount());
            for (long id = 1; id <= EVENTS; id++) {
                if (NOT_IN_LOG.contains(id)) {
                    long missing = id;
                    assertThrows(JetStreamApiException.class, () -> management.getMessage(stream, missing));
                    continue;
                }
                MessageInfo message = management.getMessage(stream, id);
                JsonNode event = JSON.readTree(new String(message.getData(), StandardCharsets.UTF_8));
                assertEquals(payloads.get(id), event.get("payload").asText(), "event " + id);
                assertEquals(id % 2 == 0 ? "m.even" : "m.odd", event.get("eventType").asText());
            }
        }
    }
}

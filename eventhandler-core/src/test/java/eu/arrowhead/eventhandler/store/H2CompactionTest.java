package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.TestServer;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The hour-long soak found the heap growing with every commit to H2: with {@code WRITE_DELAY 0} each commit
 * writes a chunk of its own, H2 keeps an object per chunk, and its background housekeeping, which would
 * rewrite them, is off. The store compacts the file itself, so the chunks stay few, and a compaction must not cost
 * the file its crash safety.
 */
class H2CompactionTest {

    @Test
    void commitsLeaveFewChunksOnceTheStoreHasCompactedItsFile() throws Exception {
        try (H2Database database = new H2Database()) {
            Map<String, String> store = database.settings();
            List<String> settings = new ArrayList<>(List.of("store.mode", "sync"));
            store.forEach((key, value) -> settings.addAll(List.of(key, value)));
            try (TestServer server = TestServer.start(settings.toArray(String[]::new));
                 Connection h2 = DriverManager.getConnection(EmbeddedH2.storeUrl(store.get("store.url")), "sa", "")) {
                for (int i = 0; i < EventDatabase.COMPACT_AFTER_COMMITS + 100; i++) {
                    // sync mode: each publish waits for its own commit
                    assertEquals(200, server.post("/eventhandler/publish",
                            "{\"eventType\":\"compacted\",\"payload\":\"" + i + "\"}").statusCode());
                }
                // Without compaction, H2 holds a chunk per commit here: over two thousand.
                Await.until("the store compacts its file (checked every 10 s)", EventStoreContract.WAIT,
                        () -> chunks(h2) < 100);
            }
        }
    }

    /**
     * The writer's sequence in sync mode (commit, force, then the 200), with the store's compaction between commits,
     * and after each commit the file as a kill -9 leaves it: everything written, read back by a fresh open. H2's
     * compaction left its retention time at 0, and then nearly every such file lacked its last commit.
     */
    @Test
    void theFileAKillLeavesAfterACompactionHoldsTheLastCommit() throws Exception {
        try (H2Database h2 = new H2Database()) {
            Map<String, String> settings = new HashMap<>(h2.settings());
            settings.put("store.mode", "sync");
            Path file = Path.of(settings.get("store.url").substring("jdbc:h2:file:".length()).split(";", 2)[0]
                    + ".mv.db");
            EventDatabase database = EventDatabase.open(ConfigLoader.withOverrides(settings));
            try {
                for (long id = 1; id <= 40; id++) {
                    List<IncomingEvent> event = List.of(SampleEvents.incoming("crash", Long.toString(id)));
                    database.write(List.of(new WriteBuffer.Entry(id, event, PublishKey.NONE, 0, 0, null, null)), List.of());
                    database.force();
                    assertEquals(id, lastIdAfterKill(file, id), "the last commit, forced, is in the file a kill leaves");
                    if (id % 10 == 0) {
                        database.compactEmbeddedStore();
                    }
                }
            } finally {
                database.close();
            }
        }
    }

    /** Opens a copy of the file as it is now, as the next start after a kill -9 would: the last event id in it. */
    private static long lastIdAfterKill(Path file, long round) throws Exception {
        Path copy = file.resolveSibling("killed" + round + ".mv.db");
        Files.copy(file, copy);
        String name = copy.getFileName().toString();
        String url = "jdbc:h2:file:" + copy.resolveSibling(name.substring(0, name.length() - ".mv.db".length()));
        try (Connection killed = DriverManager.getConnection(url, "sa", "");
             ResultSet row = killed.createStatement().executeQuery("SELECT COALESCE(MAX(id), 0) FROM eh_event")) {
            row.next();
            return row.getLong(1);
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    private static long chunks(Connection h2) {
        try (ResultSet row = h2.createStatement().executeQuery("SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS"
                + " WHERE SETTING_NAME = 'info.CHUNK_COUNT'")) {
            row.next();
            return Long.parseLong(row.getString(1));
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}

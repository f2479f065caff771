package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The hour-long soak found the heap growing with every commit to H2: with {@code WRITE_DELAY 0} each commit
 * writes a chunk of its own, H2 keeps an object per chunk, and its background housekeeping, which would
 * rewrite them, is off. The store compacts the file itself, so the chunks stay few.
 */
class H2CompactionTest {

    @Test
    void sixHundredCommitsLeaveFewChunksOnceTheStoreHasCompactedItsFile() throws Exception {
        try (H2Database database = new H2Database()) {
            Map<String, String> store = database.settings();
            List<String> settings = new ArrayList<>(List.of("store.mode", "sync"));
            store.forEach((key, value) -> settings.addAll(List.of(key, value)));
            try (TestServer server = TestServer.start(settings.toArray(String[]::new));
                 Connection h2 = DriverManager.getConnection(EmbeddedH2.interruptProof(store.get("store.url")), "sa", "")) {
                for (int i = 0; i < 600; i++) {
                    // sync mode: each publish waits for its own commit
                    assertEquals(200, server.post("/eventhandler/publish",
                            "{\"eventType\":\"compacted\",\"payload\":\"" + i + "\"}").statusCode());
                }
                // Without compaction, H2 holds a chunk per commit here: six hundred.
                Await.until("the store compacts its file (every 10 s)", EventStoreContract.WAIT,
                        () -> chunks(h2) < 100);
            }
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

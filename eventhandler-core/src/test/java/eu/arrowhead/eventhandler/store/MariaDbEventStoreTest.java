package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.StringJoiner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The event store's suite on MariaDB or MySQL, when {@code EVENTHANDLER_TEST_MYSQL_URL} names one (CI's
 * {@code .ci/run} does); skipped otherwise, so that {@code mvn verify} needs no database server.
 */
@EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
class MariaDbEventStoreTest extends EventStoreContract {
    @Override
    TestDatabase openDatabase() {
        return new MariaDbDatabase();
    }

    /** JDBC batching really reaches the server: far fewer INSERT statements than events. */
    @Test
    void eventsAreInsertedManyRowsPerStatement() throws Exception {
        Map<String, String> settings = database().settings();
        try (TestServer server = TestServer.start("store.mode", "async", "store.url", settings.get("store.url"),
                "store.user", settings.get("store.user"), "store.password", "", "store.id-mark-file",
                settings.get("store.id-mark-file"))) {
            long insertsBefore = insertStatements(settings);
            StringJoiner batch = new StringJoiner(",", "[", "]");
            for (int i = 0; i < 1000; i++) {
                batch.add("{\"eventType\":\"batched\",\"payload\":\"" + i + "\"}");
            }
            assertEquals(200, server.post("/eventhandler/publish/batch", batch.toString()).statusCode());
            Await.until("1000 events written", WAIT,
                    () -> server.metric("eventhandler_store_written_events_total") == 1000);
            long inserts = insertStatements(settings) - insertsBefore;
            assertTrue(inserts <= 50, "1000 events took " + inserts + " INSERT statements");
        }
    }

    private static long insertStatements(Map<String, String> settings) throws SQLException {
        try (Connection connection = DriverManager.getConnection(settings.get("store.url"), settings.get("store.user"), "");
             Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("SHOW GLOBAL STATUS LIKE 'Com_insert'")) {
            result.next();
            return result.getLong(2);
        }
    }
}

package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * H2 closes a database it can no longer trust (a write to its file that failed, an {@code OutOfMemoryError}
 * inside it) and every connection to it then fails for good; {@code SHUTDOWN IMMEDIATELY} from another connection
 * does the same on purpose. The store replaces its connections, which opens the file again: within seconds it
 * writes what it buffered meanwhile, and reads work again. (It used to answer publishes 200 and drop every one of
 * them from the log until someone restarted it.)
 */
class ClosedDatabaseTest {

    @Test
    void aDatabaseThatClosedItselfIsOpenedAgainAndLosesNothing() throws Exception {
        try (H2Database database = new H2Database()) {
            Map<String, String> store = database.settings();
            List<String> settings = new ArrayList<>(List.of("store.mode", "async"));
            store.forEach((key, value) -> settings.addAll(List.of(key, value)));
            try (TestServer server = TestServer.start(settings.toArray(String[]::new))) {
                List<Long> ids = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    ids.add(server.publish("reopened", "before " + i));
                }
                Await.until("10 events in the log", EventStoreContract.WAIT,
                        () -> server.metric("eventhandler_store_written_events_total") == 10);

                shutDownImmediately(store.get("store.url"));
                try (SseStream live = server.subscribe("?eventType=reopened")) {
                    for (int i = 0; i < 20; i++) {
                        ids.add(server.publish("reopened", "after " + i));
                    }
                    assertEquals(20, live.events(20, EventStoreContract.WAIT).size(), "live delivery went on");
                }
                Await.until("the log caught up after the database was opened again", EventStoreContract.WAIT,
                        () -> server.metric("eventhandler_store_written_events_total") == 30
                                && server.get("/eventhandler/mgmt/health").statusCode() == 200);
                List<Long> logged = EventStoreContract.logged(server, "?eventType=reopened").stream()
                        .map(event -> event.get("id").asLong()).toList();
                assertEquals(ids, logged, "every acknowledged event is in the log, once, in order");
                assertEquals(0, server.metric("eventhandler_store_dropped_events_total"));
            }
        }
    }

    /** What H2 does to a database it can no longer trust: closes it under every connection. */
    private static void shutDownImmediately(String url) throws SQLException {
        try (Connection h2 = DriverManager.getConnection(EmbeddedH2.storeUrl(url), "sa", "");
             Statement statement = h2.createStatement()) {
            statement.execute("SHUTDOWN IMMEDIATELY");
        }
    }
}

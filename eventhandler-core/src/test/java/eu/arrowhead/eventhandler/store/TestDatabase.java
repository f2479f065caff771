package eu.arrowhead.eventhandler.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/** A real database for the event store's tests: embedded H2, or the MariaDB/MySQL server of CI. */
interface TestDatabase extends AutoCloseable {

    /** The store settings ({@code store.url}, user, password) of an empty log. */
    Map<String, String> settings();

    /** The same database's settings, reached through a TCP port that stands in for the server's own. */
    Map<String, String> settingsVia(int port);

    /** Host and port of the database server, for a {@code TcpProxy}; starts one if needed (H2). */
    String host();

    int port();

    /**
     * Holds a lock on the row every write transaction of the store updates, until closed: the database works
     * but the writer cannot commit, as when a database is slow (the store's lock wait must outlast the test:
     * {@code store.timeout-seconds} for MySQL, the URL's LOCK_TIMEOUT for H2).
     */
    default AutoCloseable holdWrites() throws SQLException {
        Map<String, String> settings = settings();
        // The same name as the server's, so that an embedded H2 database is shared in this JVM, not opened twice.
        Connection connection = DriverManager.getConnection(EmbeddedH2.storeUrl(settings.get("store.url")),
                settings.get("store.user"), settings.get("store.password"));
        connection.setAutoCommit(false);
        try (Statement statement = connection.createStatement()) {
            statement.executeQuery("SELECT state_value FROM eh_state WHERE name = 'last_id' FOR UPDATE").close();
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
        return () -> {
            try (connection) {
                connection.rollback();
            }
        };
    }

    @Override
    void close();
}

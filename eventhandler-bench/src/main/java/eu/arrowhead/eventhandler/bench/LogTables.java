package eu.arrowhead.eventhandler.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * Drops the event log's tables (and the push subscriptions kept beside it) from a MySQL or MariaDB database,
 * so that a server started on it next begins with an empty log and ids from 1: its migrations create the
 * tables again. Plain JDBC; the driver is the server's own, found by {@link DriverManager} on the classpath.
 */
final class LogTables {
    private static final String CONNECT_TIMEOUT_MILLIS = "5000";

    private LogTables() {
    }

    /** @throws SQLException when the database cannot be reached or will not drop them: the reason is its message */
    static void drop(String url, String user) throws SQLException {
        Properties login = new Properties();
        login.setProperty("user", user);
        login.setProperty("password", "");
        login.setProperty("connectTimeout", CONNECT_TIMEOUT_MILLIS);
        try (Connection connection = DriverManager.getConnection(url, login);
             Statement statement = connection.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS eh_event, eh_state, eh_push_subscription, eh_missing_range,"
                    + " eh_authorization_answer, eh_push_cursor, eh_schema_version");
        }
    }
}

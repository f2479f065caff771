package eu.arrowhead.eventhandler.store;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * The MariaDB or MySQL server named by the system property {@value #URL_PROPERTY} (CI sets it to
 * {@code jdbc:mysql://127.0.0.1:3306/test}), user from {@value #USER_PROPERTY} (default root) with an empty
 * password. Each test starts with the log's tables dropped.
 */
final class MariaDbDatabase implements TestDatabase {
    static final String URL_PROPERTY = "eventhandler.test.mysql-url";
    static final String USER_PROPERTY = "eventhandler.test.mysql-user";

    private final String url = System.getProperty(URL_PROPERTY);
    private final String user = System.getProperty(USER_PROPERTY, "root");
    private final URI address = URI.create(url.substring("jdbc:".length()));

    MariaDbDatabase() {
        try (Connection connection = DriverManager.getConnection(url, user, "");
             Statement statement = connection.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS eh_event, eh_state, eh_schema_version");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reset the test database at " + url, e);
        }
    }

    @Override
    public Map<String, String> settings() {
        return Map.of("store.url", url, "store.user", user, "store.password", "");
    }

    @Override
    public Map<String, String> settingsVia(int port) {
        return Map.of("store.url", "jdbc:mysql://127.0.0.1:" + port + address.getPath(), "store.user", user,
                "store.password", "");
    }

    @Override
    public String host() {
        return address.getHost();
    }

    @Override
    public int port() {
        return address.getPort() < 0 ? 3306 : address.getPort();
    }

    @Override
    public void close() {
    }
}

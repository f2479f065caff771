package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.testing.MariaDbTurn;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * The MariaDB or MySQL server named by the environment variable {@value #URL_VARIABLE} ({@code .ci/run}
 * sets it to {@code jdbc:mysql://127.0.0.1:3306/test}), user from {@value #USER_VARIABLE} (default root)
 * with an empty password. Each test starts with the log's tables dropped, in its {@link MariaDbTurn}, which it
 * holds until closed. An environment variable rather
 * than a system property, so that plain {@code mvn verify} runs it too and the server processes of the
 * integration tests see the same setting.
 */
final class MariaDbDatabase implements TestDatabase {
    static final String URL_VARIABLE = "EVENTHANDLER_TEST_MYSQL_URL";
    static final String USER_VARIABLE = "EVENTHANDLER_TEST_MYSQL_USER";

    private final String url = System.getenv(URL_VARIABLE);
    private final String user = System.getenv().getOrDefault(USER_VARIABLE, "root");
    private final URI address = URI.create(url.substring("jdbc:".length()));
    /** A new log needs a new id mark too: the one beside the working directory would say ids were given. */
    private final String idMarkFile;
    private final MariaDbTurn turn = MariaDbTurn.take();

    MariaDbDatabase() {
        try {
            idMarkFile = Files.createTempDirectory("eventhandler-mariadb-").resolve("eventhandler.ids").toString();
        } catch (IOException e) {
            turn.close();
            throw new UncheckedIOException(e);
        }
        try (Connection connection = DriverManager.getConnection(url, user, "");
             Statement statement = connection.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS eh_event, eh_state, eh_push_subscription, eh_missing_range,"
                    + " eh_authorization_answer, eh_push_cursor, eh_publish_key, eh_push_dead_letter,"
                    + " eh_schema_version");
        } catch (SQLException e) {
            turn.close();
            throw new IllegalStateException("cannot reset the test database at " + url, e);
        }
    }

    @Override
    public Map<String, String> settings() {
        return Map.of("store.url", url, "store.user", user, "store.password", "", "store.id-mark-file", idMarkFile);
    }

    @Override
    public Map<String, String> settingsVia(int port) {
        return Map.of("store.url", "jdbc:mysql://127.0.0.1:" + port + address.getPath(), "store.user", user,
                "store.password", "", "store.id-mark-file", idMarkFile);
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
        turn.close();
    }
}

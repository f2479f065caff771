package eu.arrowhead.eventhandler.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates and upgrades the log's schema with versioned SQL scripts, one directory per database dialect,
 * recording each applied version in {@code eh_schema_version}. The schema is never derived from the
 * entities ({@code hbm2ddl}): a production database changes only through a reviewed script.
 *
 * <p>To change the schema, add {@code V<n+1>__what.sql} to both dialect directories and to {@link #SCRIPTS};
 * never edit a script that has been released.
 */
final class SchemaMigrations {
    private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrations.class);
    private static final List<String> SCRIPTS = List.of("V1__event_log.sql", "V2__push_subscriptions.sql",
            "V3__missing_ranges.sql", "V4__authorization_answers.sql", "V5__push_cursors.sql",
            "V6__publish_keys.sql", "V7__push_dead_letters.sql");

    private SchemaMigrations() {
    }

    /**
     * Applies the scripts the database has not seen yet.
     *
     * @param dialect the script directory: {@code h2} or {@code mysql}
     * @return the schema version now
     */
    static int migrate(DataSource dataSource, String dialect) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE IF NOT EXISTS eh_schema_version (version INT NOT NULL PRIMARY KEY,"
                        + " description VARCHAR(255) NOT NULL, applied_at_ms BIGINT NOT NULL)");
            }
            connection.commit();
            int current = currentVersion(connection);
            if (current > SCRIPTS.size()) {
                throw new SQLException("the database schema is at version " + current + ", newer than this"
                        + " Event Handler knows (" + SCRIPTS.size() + "); run the newer Event Handler");
            }
            for (int version = current + 1; version <= SCRIPTS.size(); version++) {
                String script = SCRIPTS.get(version - 1);
                for (String sql : statements(read(dialect + "/" + script))) {
                    try (Statement statement = connection.createStatement()) {
                        statement.execute(sql);
                    }
                }
                try (PreparedStatement insert = connection.prepareStatement(
                        "INSERT INTO eh_schema_version (version, description, applied_at_ms) VALUES (?, ?, ?)")) {
                    insert.setInt(1, version);
                    insert.setString(2, script);
                    insert.setLong(3, System.currentTimeMillis());
                    insert.executeUpdate();
                }
                connection.commit();
                LOG.info("event store schema migrated to version {} ({})", version, script);
            }
            return SCRIPTS.size();
        }
    }

    private static int currentVersion(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("SELECT MAX(version) FROM eh_schema_version")) {
            result.next();
            return result.getInt(1);
        }
    }

    private static String read(String resource) {
        try (InputStream in = SchemaMigrations.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks the migration " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the migration " + resource, e);
        }
    }

    /** Splits a script at semicolons that end a line, dropping {@code --} comment lines. */
    static List<String> statements(String script) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                String sql = current.toString().strip();
                statements.add(sql.substring(0, sql.length() - 1));
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            statements.add(current.toString().strip());
        }
        return statements;
    }
}

package eu.arrowhead.eventhandler.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.hibernate.SessionFactory;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.AvailableSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@link EventDatabase#open} connects: the HikariCP pools, the schema and H2's settings on the writer's
 * connection, and Hibernate's session factory over the readers' pool.
 */
final class DatabaseSetup {
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseSetup.class);

    private DatabaseSetup() {
    }

    /** Brings the schema up to date and sets what the store needs of the database, through the writer's pool. */
    static void prepare(HikariDataSource writerPool, EventHandlerConfig config, boolean h2) throws SQLException {
        SchemaMigrations.migrate(writerPool, h2 ? "h2" : "mysql");
        if (h2) {
            // H2 writes commits to its file in the background, half a second later by default. Written at
            // once instead: in sync mode a 200 promises the event survives a crash of the process, and in
            // async mode what a crash loses must stay within store.buffer-events, which half a second of a
            // fast publisher would exceed. (The writer's transactions are batches, so this costs little.)
            execute(writerPool, "SET WRITE_DELAY 0");
            if (!config.storeUrl().toUpperCase(Locale.ROOT).contains("CACHE_SIZE")) {
                // H2's page cache is 16 MiB by default whatever the heap: a quarter of a 64 MiB one. It
                // gets its share of the heap instead (HeapBudget), in KiB.
                execute(writerPool, "SET CACHE_SIZE " + Math.max(1, config.heap().storeCache() >> 10));
            }
        }
        if (!h2 && config.storeMode() == EventHandlerConfig.StoreMode.SYNC) {
            warnUnlessCommitsAreFlushed(writerPool);
        }
    }

    /**
     * In sync mode a 200 promises the event is on disk. MySQL and MariaDB keep that promise in their commit only
     * with {@code innodb_flush_log_at_trx_commit=1} (their default); 0 or 2 leave up to a second of commits to a
     * power cut. Said once at start; the server still starts, as a battery-backed controller may make it safe.
     */
    private static void warnUnlessCommitsAreFlushed(HikariDataSource pool) {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("SELECT @@innodb_flush_log_at_trx_commit")) {
            if (result.next() && result.getInt(1) != 1) {
                LOG.warn("store.mode=sync, but the database has innodb_flush_log_at_trx_commit={}: it does not flush"
                        + " each commit to disk, so a power cut can lose acknowledged events (up to about a second"
                        + " of them); set it to 1", result.getInt(1));
            }
        } catch (SQLException e) {
            LOG.warn("store.mode=sync, but the database did not say whether it flushes each commit to disk"
                    + " (innodb_flush_log_at_trx_commit): {}", e.getMessage());
        }
    }

    static HikariDataSource pool(EventHandlerConfig config, String name, int size, boolean reads)
            throws SQLException {
        HikariConfig pool = new HikariConfig();
        pool.setPoolName(name);
        pool.setJdbcUrl(EmbeddedH2.storeUrl(config.storeUrl()));
        pool.setUsername(config.storeUser());
        pool.setPassword(config.storePassword());
        pool.setMaximumPoolSize(size);
        pool.setMinimumIdle(1);
        pool.setAutoCommit(false);
        pool.setConnectionTimeout(config.storeTimeout().toMillis());
        pool.setValidationTimeout(Math.min(config.storeTimeout().toMillis(), 5_000));
        if (!config.storeUrl().startsWith("jdbc:h2:")) {
            if (reads) {
                // The readers' statements honour their fetch size through a server-side cursor, so that a page
                // of large events is never held whole by the driver (EventPages); the writer's batches stay
                // client-side, rewritten into multi-row INSERTs.
                pool.addDataSourceProperty("useCursorFetch", "true");
            }
            pool.addDataSourceProperty("rewriteBatchedStatements", "true");
            pool.addDataSourceProperty("cachePrepStmts", "true");
            pool.addDataSourceProperty("connectTimeout", String.valueOf(config.storeTimeout().toMillis()));
            pool.addDataSourceProperty("socketTimeout", String.valueOf(config.storeTimeout().toMillis()));
        }
        try {
            return new HikariDataSource(pool);
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new SQLException("cannot connect: " + cause.getMessage().lines().findFirst().orElse(""), e);
        }
    }

    static SessionFactory sessionFactory(HikariDataSource dataSource, boolean h2) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, dataSource);
        settings.put(AvailableSettings.DIALECT, h2 ? "org.hibernate.dialect.H2Dialect" : "org.hibernate.dialect.MySQLDialect");
        // The dialect is given, so Hibernate need not ask the database at boot: a faster start.
        settings.put(AvailableSettings.ALLOW_METADATA_ON_BOOT, false);
        settings.put(AvailableSettings.HBM2DDL_AUTO, "none");
        settings.put(AvailableSettings.CONNECTION_PROVIDER_DISABLES_AUTOCOMMIT, true);
        settings.put(AvailableSettings.XML_MAPPING_ENABLED, false);
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, false);
        // A page reads rows by id lists of any length up to EventPages' chunk: padded to powers of two, they
        // make a handful of distinct statements for the databases to parse and cache, not one per length.
        settings.put(AvailableSettings.IN_CLAUSE_PARAMETER_PADDING, true);
        StandardServiceRegistry registry = new StandardServiceRegistryBuilder().applySettings(settings).build();
        try {
            return new MetadataSources(registry)
                    .addAnnotatedClass(EventRecord.class)
                    .addAnnotatedClass(StateRecord.class)
                    .addAnnotatedClass(SubscriptionRecord.class)
                    .addAnnotatedClass(MissingRangeRecord.class)
                    .addAnnotatedClass(AnswerRecord.class)
                    .addAnnotatedClass(CursorRecord.class)
                    .addAnnotatedClass(PublishKeyRecord.class)
                    .addAnnotatedClass(DeadLetterRecord.class)
                    .buildMetadata()
                    .buildSessionFactory();
        } catch (RuntimeException e) {
            StandardServiceRegistryBuilder.destroy(registry);
            throw e;
        }
    }

    private static void execute(HikariDataSource dataSource, String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
            connection.commit();
        }
    }
}

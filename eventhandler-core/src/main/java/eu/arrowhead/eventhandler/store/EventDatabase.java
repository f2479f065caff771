package eu.arrowhead.eventhandler.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.query.SelectionQuery;

/**
 * The log's tables, through Hibernate ORM over a HikariCP pool: every statement the store runs, each in its
 * own transaction. Blocking; thread-safe.
 *
 * <p>Performance: the writer's transaction runs in a {@link StatelessSession}, so no persistence context holds
 * the events and nothing is flushed or dirty-checked; its statements are the entity persisters' own, built
 * once at boot, so no query is parsed or translated per transaction. Ids are assigned by the hub, so the
 * inserts of a transaction go as one JDBC batch, which MySQL Connector/J rewrites into multi-row INSERTs
 * ({@code rewriteBatchedStatements}). Reads are plain queries on the primary key or the {@code (topic_key, id)}
 * index.
 */
final class EventDatabase implements BatchSink, AutoCloseable {
    /** Rows deleted per retention transaction, so that retention never holds long locks. */
    private static final int DELETE_CHUNK_IDS = 10_000;

    /** The longest one compaction of H2's file may hold its store (and so a commit) up. */
    private static final int COMPACT_MILLIS = 50;

    private final HikariDataSource dataSource;
    private final SessionFactory sessions;

    private EventDatabase(HikariDataSource dataSource, SessionFactory sessions) {
        this.dataSource = dataSource;
        this.sessions = sessions;
    }

    /**
     * What the log remembers across restarts.
     *
     * @param lastId      the last id given out, as far as the log knows
     * @param cleanStop   the last id at the last clean stop; equal to {@code lastId} if the last run stopped cleanly
     * @param lagBound    how many ids the last run could give out beyond its last commit
     * @param deletedUpTo retention deleted every event up to this id
     * @param missing     the ranges of ids above it the log does not hold
     */
    record State(long lastId, long cleanStop, long lagBound, long deletedUpTo, List<MissingRanges.Range> missing) {
    }

    /** Opens the pool, brings the schema up to date and starts Hibernate. */
    static EventDatabase open(EventHandlerConfig config) throws SQLException {
        boolean h2 = config.storeUrl().startsWith("jdbc:h2:");
        HikariConfig pool = new HikariConfig();
        pool.setPoolName("eh-store");
        pool.setJdbcUrl(config.storeUrl());
        pool.setUsername(config.storeUser());
        pool.setPassword(config.storePassword());
        pool.setMaximumPoolSize(config.storePoolSize());
        pool.setMinimumIdle(1);
        pool.setAutoCommit(false);
        pool.setConnectionTimeout(config.storeTimeout().toMillis());
        pool.setValidationTimeout(Math.min(config.storeTimeout().toMillis(), 5_000));
        if (!h2) {
            pool.addDataSourceProperty("rewriteBatchedStatements", "true");
            pool.addDataSourceProperty("cachePrepStmts", "true");
            pool.addDataSourceProperty("connectTimeout", String.valueOf(config.storeTimeout().toMillis()));
            pool.addDataSourceProperty("socketTimeout", String.valueOf(config.storeTimeout().toMillis()));
        }
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(pool);
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new SQLException("cannot connect: " + cause.getMessage().lines().findFirst().orElse(""), e);
        }
        try {
            SchemaMigrations.migrate(dataSource, h2 ? "h2" : "mysql");
            if (h2) {
                // H2 writes commits to its file in the background, half a second later by default. Written at
                // once instead: in sync mode a 200 promises the event survives a crash of the process, and in
                // async mode what a crash loses must stay within store.buffer-events, which half a second of a
                // fast publisher would exceed. (The writer's transactions are batches, so this costs little.)
                execute(dataSource, "SET WRITE_DELAY 0");
                if (!config.storeUrl().toUpperCase(Locale.ROOT).contains("CACHE_SIZE")) {
                    // H2's page cache is 16 MiB by default whatever the heap: a quarter of a 64 MiB one. It
                    // gets its share of the heap instead (HeapBudget), in KiB.
                    execute(dataSource, "SET CACHE_SIZE " + Math.max(1, config.heap().storeCache() >> 10));
                }
            }
            return new EventDatabase(dataSource, sessionFactory(dataSource, h2));
        } catch (SQLException | RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    private static SessionFactory sessionFactory(HikariDataSource dataSource, boolean h2) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, dataSource);
        settings.put(AvailableSettings.DIALECT, h2 ? "org.hibernate.dialect.H2Dialect" : "org.hibernate.dialect.MySQLDialect");
        // The dialect is given, so Hibernate need not ask the database at boot: a faster start.
        settings.put(AvailableSettings.ALLOW_METADATA_ON_BOOT, false);
        settings.put(AvailableSettings.HBM2DDL_AUTO, "none");
        settings.put(AvailableSettings.CONNECTION_PROVIDER_DISABLES_AUTOCOMMIT, true);
        settings.put(AvailableSettings.XML_MAPPING_ENABLED, false);
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, false);
        StandardServiceRegistry registry = new StandardServiceRegistryBuilder().applySettings(settings).build();
        try {
            return new MetadataSources(registry)
                    .addAnnotatedClass(EventRecord.class)
                    .addAnnotatedClass(StateRecord.class)
                    .addAnnotatedClass(SubscriptionRecord.class)
                    .addAnnotatedClass(MissingRangeRecord.class)
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

    State state() {
        return sessions.fromTransaction(session -> {
            Map<String, Long> values = new HashMap<>();
            session.createSelectionQuery("from StateRecord", StateRecord.class).getResultList()
                    .forEach(row -> values.put(row.name(), row.value()));
            Long maxId = session.createSelectionQuery("select max(e.id) from EventRecord e", Long.class)
                    .getSingleResult();
            long lastId = Math.max(values.getOrDefault(StateRecord.LAST_ID, 0L), maxId == null ? 0 : maxId);
            List<MissingRanges.Range> missing = session.createSelectionQuery(
                            "from MissingRangeRecord r order by r.firstId", MissingRangeRecord.class)
                    .getResultList().stream().map(MissingRangeRecord::range).toList();
            return new State(lastId, values.getOrDefault(StateRecord.CLEAN_STOP, -1L),
                    values.getOrDefault(StateRecord.LAG_BOUND, 0L), values.getOrDefault(StateRecord.MISSING_UP_TO, 0L),
                    missing);
        });
    }

    /** Sets named state values and saves missing ranges, in one transaction. */
    void setState(Map<String, Long> values, List<MissingRanges.Range> missing) {
        sessions.inStatelessTransaction(session -> {
            values.forEach((name, value) -> session.update(new StateRecord(name, value)));
            saveRanges(session, missing);
        });
    }

    /** Inserts the events (one JDBC batch), records the last id and saves missing ranges, in one transaction. */
    @Override
    public void write(List<WriteBuffer.Entry> batch, List<MissingRanges.Range> missing) {
        List<EventRecord> records = new ArrayList<>();
        for (WriteBuffer.Entry entry : batch) {
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                records.add(EventRecord.of(id++, event));
            }
        }
        long lastId = batch.get(batch.size() - 1).lastId();
        sessions.inStatelessTransaction(session -> {
            session.insertMultiple(records);
            session.update(new StateRecord(StateRecord.LAST_ID, lastId));
            saveRanges(session, missing);
        });
    }

    /**
     * A merged range replaces the saved ranges it covers, which all start within it. Only after an outage or
     * a crash: the query this runs is not worth keeping prepared.
     */
    private static void saveRanges(StatelessSession session, List<MissingRanges.Range> ranges) {
        for (MissingRanges.Range range : ranges) {
            session.createMutationQuery("delete from MissingRangeRecord r where r.firstId between :first and :last")
                    .setParameter("first", range.first()).setParameter("last", range.last()).executeUpdate();
            session.insert(new MissingRangeRecord(range));
        }
    }

    /** Raises retention's watermark (never lowers it) and forgets the ranges wholly below it. */
    private static void raiseDeletedUpTo(Session session, long upToId) {
        session.createMutationQuery("update StateRecord s set s.value = :upTo where s.name = :name"
                        + " and s.value < :upTo")
                .setParameter("upTo", upToId).setParameter("name", StateRecord.MISSING_UP_TO)
                .executeUpdate();
        session.createMutationQuery("delete from MissingRangeRecord r where r.lastId <= :upTo")
                .setParameter("upTo", upToId).executeUpdate();
    }

    /** Events of the topics with ids in ({@code afterId}, {@code upToId}], oldest first. */
    List<EventRecord> read(long afterId, long upToId, Collection<String> topicKeys, int maxEvents) {
        return sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                        "from EventRecord e where e.id > :after and e.id <= :upTo and e.topicKey in (:topics)"
                                + " order by e.id", EventRecord.class)
                .setParameter("after", afterId).setParameter("upTo", upToId)
                .setParameterList("topics", topicKeys)
                .setMaxResults(maxEvents)
                .getResultList());
    }

    /**
     * A page of the log for {@code mgmt/events}.
     *
     * @param topicKeys empty for every topic
     * @param fromMillis, toMillis an inclusive range of timeStamps; {@code null} for no bound
     */
    List<EventRecord> query(Collection<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int maxEvents) {
        StringBuilder hql = new StringBuilder("from EventRecord e where e.id > :after");
        if (!topicKeys.isEmpty()) {
            hql.append(" and e.topicKey in (:topics)");
        }
        if (fromMillis != null) {
            hql.append(" and e.timeStampMillis >= :from");
        }
        if (toMillis != null) {
            hql.append(" and e.timeStampMillis <= :to");
        }
        hql.append(" order by e.id");
        return sessions.fromStatelessTransaction(session -> {
            SelectionQuery<EventRecord> query = session.createSelectionQuery(hql.toString(), EventRecord.class)
                    .setParameter("after", afterId).setMaxResults(maxEvents);
            if (!topicKeys.isEmpty()) {
                query.setParameterList("topics", topicKeys);
            }
            if (fromMillis != null) {
                query.setParameter("from", fromMillis);
            }
            if (toMillis != null) {
                query.setParameter("to", toMillis);
            }
            return query.getResultList();
        });
    }

    /** The id of the newest event with a timeStamp before {@code cutoffMillis}, or 0. */
    long lastIdBefore(long cutoffMillis) {
        Long id = sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                        "select max(e.id) from EventRecord e where e.timeStampMillis < :cutoff", Long.class)
                .setParameter("cutoff", cutoffMillis).getSingleResult());
        return id == null ? 0 : id;
    }

    /** The id of the event with {@code newer} events after it, or 0 if there are not that many. */
    long idBeforeNewest(long newer) {
        List<Long> ids = sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                        "select e.id from EventRecord e order by e.id desc", Long.class)
                .setFirstResult((int) Math.min(newer, Integer.MAX_VALUE)).setMaxResults(1).getResultList());
        return ids.isEmpty() ? 0 : ids.get(0);
    }

    /**
     * Deletes every event with an id up to {@code upToId}, a chunk per transaction, and records the bound.
     *
     * @return the events deleted
     */
    long deleteUpTo(long upToId) {
        long deleted = 0;
        while (true) {
            Long oldest = sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                    "select min(e.id) from EventRecord e", Long.class).getSingleResult());
            if (oldest == null || oldest > upToId) {
                return deleted;
            }
            long chunkEnd = Math.min(upToId, oldest + DELETE_CHUNK_IDS);
            deleted += sessions.fromTransaction(session -> {
                int rows = session.createMutationQuery("delete from EventRecord e where e.id <= :upTo")
                        .setParameter("upTo", chunkEnd).executeUpdate();
                raiseDeletedUpTo(session, chunkEnd);
                return rows;
            });
        }
    }

    /** Every push subscription, in id order. */
    List<SubscriptionStore.StoredSubscription> subscriptions() {
        return sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                "from SubscriptionRecord s order by s.id", SubscriptionRecord.class).getResultList())
                .stream().map(SubscriptionRecord::stored).toList();
    }

    /** Inserts or replaces a push subscription by its id. */
    void saveSubscription(SubscriptionStore.StoredSubscription subscription) {
        sessions.inTransaction(session -> session.merge(new SubscriptionRecord(subscription)));
    }

    void deleteSubscription(long id) {
        sessions.inTransaction(session -> session.createMutationQuery(
                "delete from SubscriptionRecord s where s.id = :id").setParameter("id", id).executeUpdate());
    }

    @Override
    public long lastWrittenId() {
        StateRecord lastId = sessions.fromStatelessTransaction(
                session -> session.get(StateRecord.class, StateRecord.LAST_ID));
        return lastId == null ? 0 : lastId.value();
    }

    @Override
    public boolean reachable() {
        try (Connection connection = dataSource.getConnection()) {
            return connection.isValid((int) Math.max(1, dataSource.getValidationTimeout() / 1000));
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * Rewrites H2's store file so that it keeps few chunks; does nothing on MySQL/MariaDB. With
     * {@code WRITE_DELAY 0} every commit writes a chunk of its own, and H2 keeps an object per chunk on the
     * heap (about 250 bytes with its map entry and bit set) until housekeeping rewrites it, which its
     * background thread did and no longer does: without this, a server that commits 100 times a second
     * gains some 90 MB of heap a day (the hour-long soak, docs/reliability.md). Measured with a loop of
     * 30 000 small commits: 30 009 chunks without it, about 400 with it every 1 000 commits.
     */
    void compactEmbeddedStore() {
        try (Connection connection = dataSource.getConnection()) {
            if (connection.isWrapperFor(JdbcConnection.class)) {
                JdbcConnection h2 = connection.unwrap(JdbcConnection.class);
                ((SessionLocal) h2.getSession()).getDatabase().getStore().getMvStore().compactFile(COMPACT_MILLIS);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reach the database to compact it: " + e.getMessage(), e);
        }
    }

    /** Why a database call failed, in a line: its root cause. */
    static String describe(RuntimeException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    @Override
    public void close() {
        try {
            sessions.close();
        } finally {
            dataSource.close();
        }
    }
}

package eu.arrowhead.eventhandler.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
import org.hibernate.Transaction;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.AvailableSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log's tables, through Hibernate ORM over a HikariCP pool: every statement the store runs, each in its
 * own transaction. Blocking; thread-safe.
 *
 * <p>Performance: the writer's transaction runs in a {@link StatelessSession}, so no persistence context holds
 * the events and nothing is flushed or dirty-checked; its statements are the entity persisters' own, built
 * once at boot, so no query is parsed or translated per transaction. Ids are assigned by the event log, so the
 * inserts of a transaction go as one JDBC batch, which MySQL Connector/J rewrites into multi-row INSERTs
 * ({@code rewriteBatchedStatements}). Reads are plain queries on the primary key or the {@code (topic_key, id)}
 * index.
 */
final class EventDatabase implements BatchSink, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventDatabase.class);
    /** Rows deleted per retention transaction, so that retention never holds long locks. */
    private static final int DELETE_CHUNK_IDS = 10_000;
    /** Keys deleted per transaction: their ids are listed in its statement. */
    private static final int DELETE_CHUNK_KEYS = 1_000;

    /** The longest one compaction of H2's file may hold its store (and so a commit) up. */
    private static final int COMPACT_MILLIS = 50;

    private final HikariDataSource writerPool;
    private final HikariDataSource readerPool;
    /** Hibernate's sessions on the readers' pool; the writer's open on its own connection. */
    private final SessionFactory sessions;
    /** One per reader connection: a read holds one for as long as it holds its connection. */
    private final Semaphore readPermits;
    private final int readers;
    private final Duration timeout;
    /** Whether the log is an H2 file in this process, whose commits the store forces itself. */
    private final boolean embeddedFile;
    /** Where that file lives: the disk whose room the writer checks before writing again after a failure. */
    private final Path embeddedDirectory;
    /**
     * The room H2 needs to write again after a full disk: a batch's chunk (a few MiB at {@code store.batch-events}
     * of large events) and its file header, with a margin.
     */
    private static final long MIN_FREE_BYTES = 16L << 20;

    private EventDatabase(HikariDataSource writerPool, HikariDataSource readerPool, SessionFactory sessions,
                          int readers, Duration timeout, boolean embeddedFile, Path embeddedDirectory) {
        this.writerPool = writerPool;
        this.readerPool = readerPool;
        this.sessions = sessions;
        this.readPermits = new Semaphore(readers, true);
        this.readers = readers;
        this.timeout = timeout;
        this.embeddedFile = embeddedFile;
        this.embeddedDirectory = embeddedDirectory;
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

    /**
     * Opens the pools, brings the schema up to date and starts Hibernate.
     *
     * <p>The writer has a pool of one connection of its own, so that no read can make it wait: readers share
     * the other {@code store.pool-size - 1}, each read taking a permit first, and a read that finds none free is
     * refused at once rather than queued behind the others for {@code store.timeout-seconds}.
     */
    static EventDatabase open(EventHandlerConfig config) throws SQLException {
        EmbeddedH2.keepValuesOutOfSharedCache();
        EmbeddedH2.prepareDirectory(config.storeUrl());
        boolean h2 = config.storeUrl().startsWith("jdbc:h2:");
        int readers = config.storePoolSize() - 1;
        HikariDataSource readerPool = pool(config, "eh-store-readers", readers, true);
        HikariDataSource writerPool;
        try {
            writerPool = pool(config, "eh-store-writer", 1, false);
        } catch (SQLException e) {
            readerPool.close();
            throw e;
        }
        try {
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
            return new EventDatabase(writerPool, readerPool, sessionFactory(readerPool, h2), readers,
                    config.storeTimeout(), config.storeUrl().startsWith("jdbc:h2:file:"),
                    EmbeddedH2.directoryOf(config.storeUrl()).orElse(null));
        } catch (SQLException | RuntimeException e) {
            writerPool.close();
            readerPool.close();
            throw e;
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

    private static HikariDataSource pool(EventHandlerConfig config, String name, int size, boolean reads)
            throws SQLException {
        HikariConfig pool = new HikariConfig();
        pool.setPoolName(name);
        pool.setJdbcUrl(EmbeddedH2.interruptProof(config.storeUrl()));
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

    /**
     * Runs the work in one transaction on the writer's own connection.
     *
     * @throws RuntimeException if the database fails, or the connection cannot be had within the timeout
     */
    private <T> T onWriterConnection(Function<StatelessSession, T> work) {
        try (Connection connection = writerPool.getConnection();
             StatelessSession session = sessions.withStatelessOptions().connection(connection).openStatelessSession()) {
            Transaction transaction = session.beginTransaction();
            try {
                T result = work.apply(session);
                transaction.commit();
                return result;
            } catch (RuntimeException e) {
                rollBack(transaction, e);
                throw e;
            }
        } catch (SQLException e) {
            reconnect(writerPool);
            throw new IllegalStateException(e.getMessage(), e);
        } catch (RuntimeException e) {
            reconnect(writerPool);
            throw e;
        }
    }

    private static void rollBack(Transaction transaction, RuntimeException failure) {
        try {
            if (transaction.isActive()) {
                transaction.rollback();
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * After a failure, the pool's connections are replaced as they come back to it. A connection to a database
     * that went away, or that closed itself (H2 closes a database it can no longer trust: a write to its file that
     * failed, an {@code OutOfMemoryError} inside it, {@code SHUTDOWN}), fails every statement for good, and
     * HikariCP evicts by itself only those whose error says the connection broke; so the store took writes again
     * only after a restart. A new connection to an embedded H2 database opens it again from its file. Cheap: a
     * failure happens once per retry of the writer (100 ms to 5 s apart) or per failed read.
     */
    private static void reconnect(HikariDataSource pool) {
        pool.getHikariPoolMXBean().softEvictConnections();
    }

    /**
     * Runs a read for a client (a replay, a page of {@code mgmt/events}) if a reader connection is free now.
     *
     * @throws UnavailableException at once if every reader connection is in use
     */
    private <T> T clientRead(Function<StatelessSession, T> read) {
        // With a timeout of 0, not the plain tryAcquire, so that the fair semaphore serves waiting upkeep first.
        if (!tryAcquireNow()) {
            throw new UnavailableException("the event store is serving " + readers + " other reads"
                    + " (store.pool-size); ask again shortly");
        }
        try {
            try {
                return sessions.fromStatelessTransaction(read);
            } catch (DamagedRangeException e) {
                // Found exactly: the reader steps around it. Read again, H2 would fail the same way.
                throw e;
            } catch (RuntimeException e) {
                // The database went away and came back, a proxy cut the connections, or H2 closed itself: every
                // idle reader connection is as dead as this one was, and the read is worth one more try. Not only
                // on SQLState 08: H2 over TCP reports a cut connection as a plain IO error (90028).
                reconnect(readerPool);
                return sessions.fromStatelessTransaction(read);
            }
        } finally {
            readPermits.release();
        }
    }

    private boolean tryAcquireNow() {
        try {
            return readPermits.tryAcquire(0, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Runs the server's own work on a reader connection (retention, push subscriptions, the state at start),
     * waiting for one up to {@code store.timeout-seconds} behind the clients' reads.
     */
    private <T> T upkeep(Supplier<T> work) {
        try {
            if (!readPermits.tryAcquire(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new UnavailableException("the event store's reader connections stayed busy for "
                        + timeout.toSeconds() + " s (store.timeout-seconds)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("the Event Handler is stopping");
        }
        try {
            return work.get();
        } finally {
            readPermits.release();
        }
    }

    private static void execute(HikariDataSource dataSource, String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
            connection.commit();
        }
    }

    State state() {
        return upkeep(() -> sessions.fromTransaction(session -> {
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
        }));
    }

    /** Sets named state values and saves missing ranges, in one transaction. */
    void setState(Map<String, Long> values, List<MissingRanges.Range> missing) {
        onWriterConnection(session -> {
            values.forEach((name, value) -> session.update(new StateRecord(name, value)));
            saveRanges(session, missing);
            return null;
        });
    }

    /**
     * Inserts the events and the keys of keyed publishes (a JDBC batch each), records the last id and saves missing
     * ranges, in one transaction: a key is kept exactly when its events are.
     */
    @Override
    public void write(List<WriteBuffer.Entry> batch, List<MissingRanges.Range> missing) {
        List<EventRecord> records = new ArrayList<>();
        List<PublishKeyRecord> keys = new ArrayList<>();
        for (WriteBuffer.Entry entry : batch) {
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                records.add(EventRecord.of(id++, event));
            }
            if (entry.key().present()) {
                keys.add(new PublishKeyRecord(new StoredKey(entry.key(), entry.firstId(), entry.events().size(),
                        entry.keyedAtMillis())));
            }
        }
        long lastId = batch.get(batch.size() - 1).lastId();
        onWriterConnection(session -> {
            session.insertMultiple(records);
            if (!keys.isEmpty()) {
                session.insertMultiple(keys);
            }
            session.update(new StateRecord(StateRecord.LAST_ID, lastId));
            saveRanges(session, missing);
            return null;
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

    /** A page of events of the topics with ids in ({@code afterId}, {@code upToId}] ({@link EventPages#replay}). */
    EventPages.Page read(long afterId, long upToId, Collection<String> topicKeys, int maxEvents, long maxBytes,
                         DamagedRanges damaged) {
        return clientRead(session -> EventPages.replay(session, afterId, upToId, topicKeys, maxEvents, maxBytes,
                damaged));
    }

    /**
     * A page of the log for {@code mgmt/events} ({@link EventPages#query}).
     *
     * @param topicKeys empty for every topic
     * @param fromMillis, toMillis an inclusive range of timeStamps; {@code null} for no bound
     */
    EventPages.Page query(Collection<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int maxEvents,
                          long maxBytes, DamagedRanges damaged) {
        return clientRead(session -> EventPages.query(session, topicKeys, fromMillis, toMillis, afterId, maxEvents,
                maxBytes, damaged));
    }

    /**
     * Whether H2 still cannot read the place of {@code id} in the log because its file is damaged there
     * ({@link DamageProbe}); false on MySQL/MariaDB, whose reads never fail that way.
     */
    boolean unreadable(long id) {
        return upkeep(() -> sessions.fromStatelessTransaction(session -> session.doReturningWork(
                connection -> DamageProbe.on(connection, probe -> probe.unreadable(id)))));
    }

    /** The id of the newest event with a timeStamp before {@code cutoffMillis}, or 0. */
    long lastIdBefore(long cutoffMillis) {
        Long id = upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                        "select max(e.id) from EventRecord e where e.timeStampMillis < :cutoff", Long.class)
                .setParameter("cutoff", cutoffMillis).getSingleResult()));
        return id == null ? 0 : id;
    }

    /** The id of the event with {@code newer} events after it, or 0 if there are not that many. */
    long idBeforeNewest(long newer) {
        List<Long> ids = upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                        "select e.id from EventRecord e order by e.id desc", Long.class)
                .setFirstResult((int) Math.min(newer, Integer.MAX_VALUE)).setMaxResults(1).getResultList()));
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
            Long oldest = upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                    "select min(e.id) from EventRecord e", Long.class).getSingleResult()));
            if (oldest == null || oldest > upToId) {
                return deleted;
            }
            long chunkEnd = Math.min(upToId, oldest + DELETE_CHUNK_IDS);
            deleted += upkeep(() -> sessions.fromTransaction(session -> {
                int rows = session.createMutationQuery("delete from EventRecord e where e.id <= :upTo")
                        .setParameter("upTo", chunkEnd).executeUpdate();
                raiseDeletedUpTo(session, chunkEnd);
                return rows;
            }));
        }
    }

    /** The newest {@code max} keyed publishes written at or after {@code cutoffMillis}, oldest first. */
    List<StoredKey> keysSince(long cutoffMillis, int max) {
        List<StoredKey> newestFirst = upkeep(() -> sessions.fromStatelessTransaction(session ->
                session.createSelectionQuery("from PublishKeyRecord k where k.createdMillis >= :cutoff"
                                + " order by k.createdMillis desc, k.firstId desc", PublishKeyRecord.class)
                        .setParameter("cutoff", cutoffMillis).setMaxResults(max).getResultList()))
                .stream().map(PublishKeyRecord::stored).toList();
        List<StoredKey> oldestFirst = new ArrayList<>(newestFirst);
        Collections.reverse(oldestFirst);
        return oldestFirst;
    }

    /**
     * Deletes the keyed publishes written before {@code cutoffMillis}, {@value #DELETE_CHUNK_KEYS} per transaction,
     * so that no transaction holds many rows locked while the writer inserts.
     *
     * @return the keys deleted
     */
    long deleteKeysBefore(long cutoffMillis) {
        long deleted = 0;
        while (true) {
            List<Long> chunk = upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                            "select k.firstId from PublishKeyRecord k where k.createdMillis < :cutoff"
                                    + " order by k.createdMillis", Long.class)
                    .setParameter("cutoff", cutoffMillis).setMaxResults(DELETE_CHUNK_KEYS).getResultList()));
            if (chunk.isEmpty()) {
                return deleted;
            }
            deleted += upkeep(() -> sessions.fromStatelessTransaction(session -> session.createMutationQuery(
                    "delete from PublishKeyRecord k where k.firstId in :ids")
                    .setParameterList("ids", chunk).executeUpdate()));
            if (chunk.size() < DELETE_CHUNK_KEYS) {
                return deleted;
            }
        }
    }

    /** Every push subscription, in id order. */
    List<SubscriptionStore.StoredSubscription> subscriptions() {
        return upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                "from SubscriptionRecord s order by s.id", SubscriptionRecord.class).getResultList()))
                .stream().map(SubscriptionRecord::stored).toList();
    }

    /** Inserts or replaces a push subscription by its id. */
    void saveSubscription(SubscriptionStore.StoredSubscription subscription) {
        upkeep(() -> sessions.fromTransaction(session -> session.merge(new SubscriptionRecord(subscription))));
    }

    /** Deletes a push subscription, its cursor and its dead letters, in one transaction. */
    void deleteSubscription(long id) {
        upkeep(() -> sessions.fromTransaction(session -> session.createMutationQuery(
                "delete from CursorRecord c where c.subscriptionId = :id").setParameter("id", id).executeUpdate()
                + session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id")
                .setParameter("id", id).executeUpdate()
                + session.createMutationQuery("delete from SubscriptionRecord s where s.id = :id")
                .setParameter("id", id).executeUpdate()));
    }

    /**
     * Every push subscription's cursor: its id to the last event id its subscriber acknowledged. A cursor saved
     * as its subscription was deleted is left out, so that a later subscription given the same id starts anew.
     */
    Map<Long, Long> cursors() {
        Map<Long, Long> cursors = new HashMap<>();
        upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                "from CursorRecord c where c.subscriptionId in (select s.id from SubscriptionRecord s)",
                CursorRecord.class).getResultList()))
                .forEach(row -> cursors.put(row.subscriptionId(), row.acknowledgedId()));
        return cursors;
    }

    /**
     * Inserts or moves push cursors and keeps dead letters, in one transaction ({@link SubscriptionStore#saveCursors(
     * Map, List, int)}).
     */
    Map<Long, Integer> saveCursors(Map<Long, Long> acknowledged, List<SubscriptionStore.DeadLetter> deadLetters,
                                   int keepPerSubscription) {
        if (acknowledged.isEmpty() && deadLetters.isEmpty()) {
            return Map.of();
        }
        return upkeep(() -> sessions.fromStatelessTransaction(session -> {
            // Not StatelessSession.upsert: Hibernate's MySQL dialect writes it with MySQL 8's row alias
            // ("values (?,?) as tr on duplicate key update"), which MariaDB refuses as a syntax error.
            if (!acknowledged.isEmpty()) {
                Set<Long> stored = new HashSet<>(session.createSelectionQuery(
                        "select c.subscriptionId from CursorRecord c where c.subscriptionId in :ids", Long.class)
                        .setParameterList("ids", acknowledged.keySet()).getResultList());
                acknowledged.forEach((id, acknowledgedId) -> {
                    CursorRecord row = new CursorRecord(id, acknowledgedId);
                    if (stored.contains(id)) {
                        session.update(row);
                    } else {
                        session.insert(row);
                    }
                });
            }
            return deadLetters.isEmpty() ? Map.<Long, Integer>of()
                    : keepDeadLetters(session, deadLetters, keepPerSubscription);
        }));
    }

    /** Inserts or replaces the letters of subscriptions that exist, then cuts each list to its bound. */
    private static Map<Long, Integer> keepDeadLetters(StatelessSession session,
                                                      List<SubscriptionStore.DeadLetter> letters, int keep) {
        Set<Long> subscriptions = new HashSet<>();
        letters.forEach(letter -> subscriptions.add(letter.subscriptionId()));
        Set<Long> existing = new HashSet<>(session.createSelectionQuery(
                "select s.id from SubscriptionRecord s where s.id in :ids", Long.class)
                .setParameterList("ids", subscriptions).getResultList());
        for (SubscriptionStore.DeadLetter letter : letters) {
            if (!existing.contains(letter.subscriptionId())) {
                continue;
            }
            DeadLetterRecord row = new DeadLetterRecord(letter);
            boolean stored = !session.createSelectionQuery("select d.eventId from DeadLetterRecord d"
                            + " where d.subscriptionId = :id and d.eventId = :eventId", Long.class)
                    .setParameter("id", letter.subscriptionId()).setParameter("eventId", letter.eventId())
                    .getResultList().isEmpty();
            if (stored) {
                session.update(row);
            } else {
                session.insert(row);
            }
        }
        Map<Long, Integer> dropped = new HashMap<>();
        for (long id : existing) {
            long count = session.createSelectionQuery(
                    "select count(d) from DeadLetterRecord d where d.subscriptionId = :id", Long.class)
                    .setParameter("id", id).getSingleResult();
            if (count <= keep) {
                continue;
            }
            List<Long> oldest = session.createSelectionQuery("select d.eventId from DeadLetterRecord d"
                            + " where d.subscriptionId = :id order by d.atMillis, d.eventId", Long.class)
                    .setParameter("id", id).setMaxResults((int) (count - keep)).getResultList();
            session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id"
                            + " and d.eventId in :ids")
                    .setParameter("id", id).setParameterList("ids", oldest).executeUpdate();
            dropped.put(id, oldest.size());
        }
        return dropped;
    }

    /** A page of a push subscription's dead letters, in event id order. */
    List<SubscriptionStore.DeadLetter> deadLetters(long subscriptionId, long afterEventId, int limit) {
        return upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                        "from DeadLetterRecord d where d.subscriptionId = :id and d.eventId > :after"
                                + " order by d.eventId", DeadLetterRecord.class)
                .setParameter("id", subscriptionId).setParameter("after", afterEventId).setMaxResults(limit)
                .getResultList()))
                .stream().map(DeadLetterRecord::letter).toList();
    }

    long countDeadLetters(long subscriptionId) {
        return upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                "select count(d) from DeadLetterRecord d where d.subscriptionId = :id", Long.class)
                .setParameter("id", subscriptionId).getSingleResult()));
    }

    /** Deletes a push subscription's dead letter of one event, or all of them. */
    int deleteDeadLetters(long subscriptionId, OptionalLong eventId) {
        return upkeep(() -> sessions.fromTransaction(session -> eventId.isPresent()
                ? session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id"
                        + " and d.eventId = :eventId").setParameter("id", subscriptionId)
                .setParameter("eventId", eventId.getAsLong()).executeUpdate()
                : session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id")
                .setParameter("id", subscriptionId).executeUpdate()));
    }

    List<AuthorizationStore.StoredAnswer> answers() {
        return upkeep(() -> sessions.fromStatelessTransaction(session -> session.createSelectionQuery(
                "from AnswerRecord a", AnswerRecord.class).getResultList()))
                .stream().map(AnswerRecord::stored).toList();
    }

    /** Inserts or replaces the answer for its subscriber. */
    void saveAnswer(AuthorizationStore.StoredAnswer answer) {
        upkeep(() -> sessions.fromTransaction(session -> session.merge(new AnswerRecord(answer))));
    }

    void deleteAnswers() {
        upkeep(() -> sessions.fromTransaction(session -> session.createMutationQuery(
                "delete from AnswerRecord a").executeUpdate()));
    }

    @Override
    public long lastWrittenId() {
        StateRecord lastId = onWriterConnection(session -> session.get(StateRecord.class, StateRecord.LAST_ID));
        return lastId == null ? 0 : lastId.value();
    }

    /**
     * A transaction that changes a row, so that H2 must write a chunk to its file and the disk must take it, then
     * forced like the events' commits. The connection is replaced after a failure ({@link #onWriterConnection}),
     * which opens a database that closed itself again. Run only while writes fail, at most ten times a second.
     */
    @Override
    public void takesWrites() {
        requireRoomForH2();
        onWriterConnection(session -> {
            int rows = session.createMutationQuery("update StateRecord s set s.value = s.value + 1 where s.name = :name")
                    .setParameter("name", StateRecord.WRITE_PROBE).executeUpdate();
            if (rows == 0) {
                session.insert(new StateRecord(StateRecord.WRITE_PROBE, 1));
            }
            return null;
        });
        force();
    }

    /**
     * Refuses to let H2 write again while its disk has less than {@value #MIN_FREE_BYTES} bytes free. After a write
     * that found the disk full, H2 opens its file again and commits into the room the file already has, and those
     * commits (answered 200 in sync mode) were gone after its next failure opened the file once more (measured in
     * {@code FullDiskIT}: 34 acknowledged events of 35). Writes are tried again only once the disk has room.
     */
    private void requireRoomForH2() {
        if (embeddedDirectory == null) {
            return;
        }
        long free;
        try {
            free = Files.getFileStore(embeddedDirectory).getUsableSpace();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot tell how much room the log's disk has: " + e.getMessage(), e);
        }
        if (free < MIN_FREE_BYTES) {
            throw new IllegalStateException(new IOException("No space left on device: " + free + " bytes free in "
                    + embeddedDirectory + ", writes wait for " + MIN_FREE_BYTES));
        }
    }

    /** Keeps H2's file in few chunks ({@link EmbeddedH2#compact}); does nothing on MySQL/MariaDB. */
    void compactEmbeddedStore() {
        try (Connection connection = writerPool.getConnection()) {
            EmbeddedH2.compact(connection, COMPACT_MILLIS);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reach the database to compact it: " + e.getMessage(), e);
        }
    }

    /**
     * Forces what the writer committed onto stable storage: H2's file ({@link EmbeddedH2#force}). MySQL and
     * MariaDB do it in their commit while {@code innodb_flush_log_at_trx_commit} is 1, checked at start.
     */
    @Override
    public void force() {
        if (!embeddedFile) {
            // MySQL and MariaDB flushed in the commit; H2 over TCP forces (or not) on its own server.
            return;
        }
        try (Connection connection = writerPool.getConnection()) {
            EmbeddedH2.force(connection);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot force the log to disk: " + e.getMessage(), e);
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
            writerPool.close();
            readerPool.close();
        }
    }
}

package eu.arrowhead.eventhandler.store;

import com.zaxxer.hikari.HikariDataSource;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
import org.hibernate.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log's tables, through Hibernate ORM over a HikariCP pool: the connections and the transactions every
 * statement of the store runs in, and the statements of the log itself (its events, its state, its reads, the
 * writer's probes and H2's file). The statements of the other tables are beside it, each group run in these
 * transactions: {@link PublishKeyTable}, {@link PushSubscriptionTable}, {@link DeadLetterTable},
 * {@link AnswerTable}, and retention's {@link RetentionQueries}; {@link DatabaseSetup} connects. Blocking;
 * thread-safe.
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

    /** The longest one compaction of H2's file may hold its store (and so a commit) up. */
    private static final int COMPACT_MILLIS = 50;
    static final int COMPACT_AFTER_COMMITS = 2_000;

    private final HikariDataSource writerPool;
    /** H2's store version at the last compaction; only the retention task's thread reads and writes it. */
    private long compactedAtVersion;
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
        HikariDataSource readerPool = DatabaseSetup.pool(config, "eh-store-readers", readers, true);
        HikariDataSource writerPool;
        try {
            writerPool = DatabaseSetup.pool(config, "eh-store-writer", 1, false);
        } catch (SQLException e) {
            readerPool.close();
            throw e;
        }
        try {
            DatabaseSetup.prepare(writerPool, config, h2);
            return new EventDatabase(writerPool, readerPool, DatabaseSetup.sessionFactory(readerPool, h2), readers,
                    config.storeTimeout(), config.storeUrl().startsWith("jdbc:h2:file:"),
                    EmbeddedH2.directoryOf(config.storeUrl()).orElse(null));
        } catch (SQLException | RuntimeException e) {
            writerPool.close();
            readerPool.close();
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

    /** {@link #upkeep} in one transaction of a stateless session: no persistence context. */
    <T> T upkeepStateless(Function<StatelessSession, T> work) {
        return upkeep(() -> sessions.fromStatelessTransaction(work));
    }

    /** {@link #upkeep} in one transaction of a session, for what needs its persistence context ({@code merge}). */
    <T> T upkeepTransaction(Function<Session, T> work) {
        return upkeep(() -> sessions.fromTransaction(work));
    }

    State state() {
        return upkeepTransaction(session -> {
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
        for (WriteBuffer.Entry entry : batch) {
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                records.add(EventRecord.of(id++, event));
            }
        }
        List<PublishKeyRecord> keys = PublishKeyTable.rowsOf(batch);
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
        return upkeepStateless(session -> session.doReturningWork(
                connection -> DamageProbe.on(connection, probe -> probe.unreadable(id))));
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

    /** Keeps H2's file in few chunks ({@link EmbeddedH2#compact}) now; does nothing on MySQL/MariaDB. */
    void compactEmbeddedStore() {
        try (Connection connection = writerPool.getConnection()) {
            EmbeddedH2.compact(connection, COMPACT_MILLIS);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reach the database to compact it: " + e.getMessage(), e);
        }
    }

    /**
     * {@link #compactEmbeddedStore} once {@link #COMPACT_AFTER_COMMITS} commits have been made since the last time.
     * Each commit leaves H2 a chunk object of some 250 bytes until a compaction, so 2 000 commits hold about half a
     * megabyte. A compaction holds H2's store, and with it the writer, for up to {@code COMPACT_MILLIS} and may read
     * megabytes of live pages: every 10 s whatever the rate, a -Xmx64m server storing 60 KB events as fast as it
     * could met a burst of full collections at each, and a bystander's publishes their longest waits and 503s
     * ({@code EveryLimitAtOnceIT}: p99 43-52 ms against 31-40 ms without them).
     */
    void compactEmbeddedStoreIfDue() {
        try (Connection connection = writerPool.getConnection()) {
            compactedAtVersion = EmbeddedH2.compactIfDue(connection, COMPACT_MILLIS, compactedAtVersion,
                    COMPACT_AFTER_COMMITS);
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

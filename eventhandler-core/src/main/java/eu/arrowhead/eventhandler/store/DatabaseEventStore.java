package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event store in a relational database (H2, or MySQL/MariaDB, through Hibernate): opens the log, continuing
 * the sequence after a crash, and wires its parts. The {@link JournalWriter} buffers what the event log appends and
 * commits it off the request path, the {@link JournalReader} serves replays and {@code mgmt/events}, the
 * {@link RetentionTask} deletes what retention no longer keeps, and {@link EventDatabase} runs every statement,
 * those of the keyed publishes, push subscriptions, dead letters and authorization answers through the tables
 * beside it ({@link PublishKeyTable}, {@link PushSubscriptionTable}, {@link DeadLetterTable}, {@link AnswerTable}).
 */
public final class DatabaseEventStore implements EventStore, EventJournal, AuthorizationStore {
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseEventStore.class);
    /** How often commits an idle async writer left unforced are forced to disk. */
    private static final Duration IDLE_FORCE_EVERY = Duration.ofSeconds(1);

    private final EventDatabase database;
    private final PublishKeyTable keys;
    private final PushSubscriptionTable subscriptions;
    private final DeadLetterTable letters;
    private final AnswerTable answers;
    private final IdMark ids;
    private final JournalWriter writer;
    private final JournalReader reader;
    private final RetentionTask retention;
    private final boolean durable;
    private final long lastIdAtStart;
    private final MissingRanges missing;
    private final DamagedRanges damaged;

    private DatabaseEventStore(EventDatabase database, IdMark ids, EventHandlerConfig config, long lastIdAtStart,
                               MissingRanges missing, DamagedRanges damaged) {
        this.database = database;
        this.keys = new PublishKeyTable(database);
        this.subscriptions = new PushSubscriptionTable(database);
        this.letters = new DeadLetterTable(database);
        this.answers = new AnswerTable(database);
        this.ids = ids;
        this.durable = config.storeMode() == EventHandlerConfig.StoreMode.SYNC;
        this.lastIdAtStart = lastIdAtStart;
        this.missing = missing;
        this.damaged = damaged;
        this.writer = new JournalWriter(database, ids, config.storeMode(), config.storeBatchEvents(),
                new WriteBuffer(config.storeBufferEvents(), config.storeBufferBytes()), lastIdAtStart, missing);
        this.reader = new JournalReader(database, writer, maxPageBytes(config), damaged);
        this.retention = new RetentionTask(database, keys, missing, config.storeRetentionAge(),
                config.storeRetentionEvents(), config.storeRetentionCheck(), config.idempotencyWindow());
    }

    /**
     * About the most event JSON one read of the log holds: a sixty-fourth of the heap (at most
     * {@code store.pool-size - 1} reads run at once), and at most half a subscriber's queue, so that a replayed page
     * never overflows the queue it goes to: 147 KiB at {@code -Xmx64m}, 1.4 MiB at {@code -Xmx256m}.
     */
    private static long maxPageBytes(EventHandlerConfig config) {
        return Math.min(config.heap().maxHeapBytes() / 64, config.subscriberLimits().queueMaxBytes() / 2);
    }

    /**
     * Opens the store: connects, migrates the schema, finds where the sequence goes on, and reserves the first
     * block of ids on disk ({@link IdMark}) before any is given.
     *
     * @throws SQLException if the database cannot be reached or migrated, or the id mark cannot be read or
     *                      written: the server does not start without its log, since it could not continue the
     *                      sequence
     */
    public static DatabaseEventStore open(EventHandlerConfig config) throws SQLException {
        Path markFile = IdMark.fileOf(config);
        OptionalLong mark;
        try {
            mark = IdMark.read(markFile);
        } catch (IOException e) {
            throw new SQLException(e.getMessage(), e);
        }
        EventDatabase database = EventDatabase.open(config);
        try {
            EventDatabase.State state = database.state();
            MissingRanges missing = new MissingRanges(state.deletedUpTo(), state.missing());
            DamagedRanges damaged = stillDamaged(database, state.missing(), missing);
            long start = continuation(state, mark, missing);
            long lagBound = config.storeMode() == EventHandlerConfig.StoreMode.SYNC ? 0 : config.storeBufferEvents();
            List<MissingRanges.Range> hole = missing.unsaved();
            database.setState(Map.of(StateRecord.LAST_ID, start, StateRecord.CLEAN_STOP, -1L,
                    StateRecord.LAG_BOUND, lagBound), hole);
            missing.saved(hole);
            IdMark ids = IdMark.reserveAbove(markFile, start, Math.max(IdMark.MIN_BLOCK, config.storeBufferEvents()));
            DatabaseEventStore store = new DatabaseEventStore(database, ids, config, start, missing, damaged);
            store.writer.start();
            LOG.info("event store open ({} mode, {}): the sequence continues after {}",
                    config.storeMode().name().toLowerCase(), config.storeUrl(), start);
            return store;
        } catch (IOException e) {
            database.close();
            throw new SQLException("the id mark cannot be recorded in " + markFile.toAbsolutePath() + ": "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            database.close();
            throw new SQLException("the event store cannot be read: " + e.getMessage(), e);
        }
    }

    /**
     * The saved missing ranges that a read once found damaged and that H2 still cannot read (a range begins
     * where its damage was found), named at start: without this the next run would step around them silently,
     * its health UP while the file is still damaged. One read of a row per range.
     */
    private static DamagedRanges stillDamaged(EventDatabase database, List<MissingRanges.Range> saved,
                                              MissingRanges missing) {
        DamagedRanges damaged = new DamagedRanges(missing);
        for (MissingRanges.Range range : saved) {
            if (database.unreadable(range.first())) {
                damaged.found(range, "the start");
            }
        }
        return damaged;
    }

    /**
     * Where the sequence goes on, above every id the previous runs may have given: the log's last id, plus what
     * an unclean stop may have left unwritten (its lag bound: {@code store.buffer-events} in async mode, 0 in sync
     * mode, where events are delivered only once forced to disk), and at least the id mark, which nothing the
     * database loses can take back. The ids skipped are recorded as missing, so that every resume across them is
     * told, except after an unclean stop in sync mode: none of them was acknowledged or delivered then.
     */
    private static long continuation(EventDatabase.State state, OptionalLong mark, MissingRanges missing) {
        long lastId = state.lastId();
        boolean clean = state.cleanStop() == lastId;
        long start = clean ? lastId : lastId + state.lagBound();
        long marked = mark.orElse(0);
        if (clean && marked > lastId) {
            LOG.warn("the event log ends at id {} but ids up to {} were given out (the database was restored from an"
                    + " older copy, emptied, or lost its newest writes): ids continue after {}, and resumes across"
                    + " {}-{} are told", lastId, marked, marked, lastId + 1, marked);
            missing.add(lastId + 1, marked);
            return marked;
        }
        start = Math.max(start, marked);
        if (start > lastId && state.lagBound() > 0) {
            LOG.warn("the previous run did not stop cleanly: events it accepted after id {} are not in the log; ids"
                    + " continue after {} so that none is given twice, and resumes across {}-{} are told", lastId,
                    start, lastId + 1, start);
            missing.add(lastId + 1, start);
        } else if (start > lastId) {
            LOG.info("the previous run did not stop cleanly; ids continue after {}, above every id it reserved (in"
                    + " sync mode it acknowledged nothing after {})", start, lastId);
        }
        return start;
    }

    @Override
    public long lastId() {
        return lastIdAtStart;
    }

    @Override
    public boolean durable() {
        return durable;
    }

    @Override
    public boolean replays() {
        return true;
    }

    @Override
    public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, PublishKey key,
                                          Runnable afterCommit) {
        return writer.append(firstId, events, key, afterCommit);
    }

    @Override
    public List<StoredKey> recentKeys(Duration window, int maxKeys) {
        return keys.since(System.currentTimeMillis() - window.toMillis(), maxKeys);
    }

    @Override
    public void requireRoom(long bodyBytes) {
        writer.requireRoom(bodyBytes);
    }

    /** While the writer finds the database down, a read that needs the database is refused at once. */
    @Override
    public void requireReadable(long afterId, long upToId) {
        writer.requireReadable(afterId, upToId);
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        return reader.read(afterId, upToId, topicKeys, filter, maxEvents);
    }

    @Override
    public QueryPage query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit) {
        return reader.query(topicKeys, fromMillis, toMillis, afterId, limit);
    }

    @Override
    public List<StoredSubscription> loadSubscriptions() {
        return subscriptions.subscriptions();
    }

    @Override
    public void saveSubscription(StoredSubscription subscription) {
        subscriptions.save(subscription);
    }

    @Override
    public void deleteSubscription(long id) {
        subscriptions.delete(id);
    }

    @Override
    public Map<Long, Long> loadCursors() {
        return subscriptions.cursors();
    }

    @Override
    public Map<Long, Integer> saveCursors(Map<Long, Long> acknowledged, List<DeadLetter> deadLetters,
                                          int keepPerSubscription) {
        return subscriptions.saveCursors(acknowledged, deadLetters, keepPerSubscription);
    }

    @Override
    public List<DeadLetter> loadDeadLetters(long subscriptionId, long afterEventId, int limit) {
        return letters.page(subscriptionId, afterEventId, limit);
    }

    @Override
    public long countDeadLetters(long subscriptionId, Set<Long> alsoListed) {
        return letters.count(subscriptionId, alsoListed);
    }

    @Override
    public int deleteDeadLetters(long subscriptionId, OptionalLong eventId) {
        return letters.delete(subscriptionId, eventId);
    }

    @Override
    public AuthorizationStore authorizationAnswers() {
        return this;
    }

    @Override
    public List<StoredAnswer> loadAnswers() {
        return answers.answers();
    }

    @Override
    public void saveAnswer(StoredAnswer answer) {
        answers.save(answer);
    }

    @Override
    public void deleteAnswers() {
        answers.deleteAll();
    }

    @Override
    public Status status() {
        return writer.status().withDamagedRanges(damaged.describe());
    }

    @Override
    public List<PeriodicTask> periodicTasks() {
        List<PeriodicTask> tasks = new ArrayList<>(retention.tasks());
        tasks.add(new PeriodicTask(writer::forceIdleCommits, IDLE_FORCE_EVERY, IDLE_FORCE_EVERY));
        return tasks;
    }

    @Override
    public boolean drain(Duration timeout) throws InterruptedException {
        return writer.drain(timeout);
    }

    /** Stops the writer and closes the database; records a clean stop if everything was written. */
    @Override
    public void close() {
        try {
            OptionalLong written = writer.stop();
            if (written.isPresent()) {
                long lastId = written.getAsLong();
                // The mark first: should the stop end between the two, the next start takes it for an unclean one.
                ids.lowerTo(lastId);
                // With the ranges dropped since the last commit (the last publish of an outage may have been).
                database.setState(Map.of(StateRecord.LAST_ID, lastId, StateRecord.CLEAN_STOP, lastId),
                        missing.unsaved());
                LOG.info("event store closed cleanly after id {}", lastId);
            } else {
                LOG.warn("event store closed with events unwritten; the next start skips ids to stay unique and"
                        + " records them as missing");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            LOG.warn("could not lower the id mark at the stop ({}); the next start skips the ids reserved",
                    e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("could not record the clean stop in the event store: {}", EventDatabase.describe(e));
        } finally {
            ids.close();
            database.close();
        }
    }
}

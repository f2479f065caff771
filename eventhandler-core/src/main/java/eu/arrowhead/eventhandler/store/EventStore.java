package eu.arrowhead.eventhandler.store;

import com.fasterxml.jackson.annotation.JsonIgnore;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.topic.HubUnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event store: the log of every accepted event, written by one writer thread off the request path.
 *
 * <p>How an event travels: the hub appends it here under its own lock (a non-blocking add to the bounded
 * {@link WriteBuffer}, in id order); the writer takes whatever has accumulated, up to {@code store.batch-events},
 * and writes it in one transaction. In sync mode the publishes waiting on that transaction share it (group
 * commit): under load one commit confirms many publishes, so the rate is bounded by the database's
 * transactions per second times the batch, not by the commit latency.
 *
 * <p>Backpressure: when the buffer is full ({@code store.buffer-events} or {@code store.buffer-bytes}) and the
 * database works, the writer is behind, and a publish is refused (503) before it gets ids, in both modes: an
 * acknowledged event is never dropped from a healthy log, and what a crash can lose stays within the buffer.
 *
 * <p>When the database fails, live delivery is not affected: in async mode the buffer keeps the newest events
 * and the writer retries with backoff; once it is full the oldest are dropped from the log and their ids
 * recorded in {@link MissingRanges}. In sync mode the waiting publishes fail at once with 503 and new ones are
 * refused until the database answers again.
 *
 * <p>Events leave the buffer only after their commit, so a replay that looks at the buffer first and the
 * database second sees every event exactly once.
 */
public final class EventStore implements EventJournal, SubscriptionStore {
    private static final Logger LOG = LoggerFactory.getLogger(EventStore.class);
    private static final long FIRST_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 5_000;
    private static final long WRITER_STOP_SECONDS = 5;
    /**
     * In async mode the writer lets events gather this long before a transaction that would not be full:
     * nobody waits for it, and what a crash can lose is bounded by {@code store.buffer-events}, not by time.
     * Most of a transaction's cost does not depend on its size (H2 writes a new chunk of every B-tree page
     * the commit touched, and the last id is updated once), so a sequential publisher at a few thousand
     * events a second costs at most 50 commits a second instead of hundreds (2 ms before issue 13: the
     * writer's CPU per event in docs/performance.md).
     */
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Refusals for backpressure come in bursts: the log says so at most this often. */
    private static final long BEHIND_LOG_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final EventDatabase database;
    private final EventHandlerConfig.StoreMode mode;
    private final boolean durable;
    private final int batchEvents;
    private final long lastIdAtStart;
    private final Duration retentionAge;
    private final long retentionEvents;
    private final MissingRanges missing;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition drained = lock.newCondition();
    /** Guarded by {@link #lock}. */
    private final WriteBuffer buffer;
    private long appendedUpTo;
    private long committedUpTo;
    private boolean stopping;
    /** Set by {@link #close}: the writer gives up on a database that still fails. */
    private boolean closing;
    /** Whether the writer waits for events; guarded by {@link #lock}. */
    private boolean writerIdle;
    /** Whether events have been dropped since the last successful write; guarded by {@link #lock}. */
    private boolean overflowing;
    /** When a refusal for backpressure was last logged at WARN; guarded by {@link #lock}. */
    private long behindLoggedNanos;
    private boolean behindLogged;
    private volatile boolean up = true;
    private volatile String lastError;
    private volatile Instant downSince;
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder failedTransactions = new LongAdder();
    private final Thread writer;

    private EventStore(EventDatabase database, EventHandlerConfig config, long lastIdAtStart, MissingRanges missing) {
        this.database = database;
        this.mode = config.storeMode();
        this.durable = mode == EventHandlerConfig.StoreMode.SYNC;
        this.batchEvents = config.storeBatchEvents();
        this.buffer = new WriteBuffer(config.storeBufferEvents(), config.storeBufferBytes());
        this.lastIdAtStart = lastIdAtStart;
        this.appendedUpTo = lastIdAtStart;
        this.committedUpTo = lastIdAtStart;
        this.missing = missing;
        this.retentionAge = config.storeRetentionAge();
        this.retentionEvents = config.storeRetentionEvents();
        this.writer = new Thread(this::writeLoop, "eh-store-writer");
        writer.setDaemon(true);
    }

    /**
     * Opens the store: connects, migrates the schema, and finds where the sequence goes on.
     *
     * <p>After a crash the sequence goes on as many ids after the last commit as the crashed run could have
     * given out unwritten (its lag bound: {@code store.buffer-events} in async mode, 0 in sync mode, where
     * events are delivered only once committed), so that no id is given to two events; those ids are recorded
     * as a missing range, so that every resume across them gets a replay-gap notice.
     *
     * @throws SQLException if the database cannot be reached or migrated: the server does not start
     *                      without its log, since it could not continue the sequence
     */
    public static EventStore open(EventHandlerConfig config) throws SQLException {
        EventDatabase database = EventDatabase.open(config);
        try {
            EventDatabase.State state = database.state();
            MissingRanges missing = new MissingRanges(state.deletedUpTo(), state.missing());
            long start = state.lastId();
            if (state.cleanStop() != state.lastId() && state.lagBound() > 0) {
                missing.add(start + 1, start + state.lagBound());
                LOG.warn("the previous run did not stop cleanly: events it accepted after id {} are not in the"
                        + " log; ids continue after {} so that none is given twice, and resumes across {}-{}"
                        + " are told", start, start + state.lagBound(), start + 1, start + state.lagBound());
                start += state.lagBound();
            }
            long lagBound = config.storeMode() == EventHandlerConfig.StoreMode.SYNC ? 0 : config.storeBufferEvents();
            List<MissingRanges.Range> hole = missing.unsaved();
            database.setState(Map.of(StateRecord.LAST_ID, start, StateRecord.CLEAN_STOP, -1L,
                    StateRecord.LAG_BOUND, lagBound), hole);
            missing.saved(hole);
            EventStore store = new EventStore(database, config, start, missing);
            store.writer.start();
            LOG.info("event store open ({} mode, {}): the sequence continues after {}",
                    config.storeMode().name().toLowerCase(), config.storeUrl(), start);
            return store;
        } catch (RuntimeException e) {
            database.close();
            throw new SQLException("the event store cannot be read: " + e.getMessage(), e);
        }
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
    public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, Runnable afterCommit) {
        int count = events.size();
        long bytes = WriteBuffer.bytesOf(events);
        lock.lock();
        try {
            if (durable && !up) {
                throw new HubUnavailableException("the event store is unavailable (" + lastError
                        + "); publish again later");
            }
            if (!buffer.fits(count, bytes)) {
                if (durable || up) {
                    throw behind();
                }
                makeRoom(count, bytes);
            }
            appendedUpTo = firstId + count - 1;
            CompletableFuture<Void> committed = durable ? new CompletableFuture<>() : null;
            buffer.add(new WriteBuffer.Entry(firstId, events, bytes, afterCommit, committed));
            // Woken only when it waits for work or a batch is full: a writer that lingers or writes would
            // otherwise be woken for nothing once per publish.
            if (writerIdle || buffer.events() >= batchEvents) {
                writerIdle = false;
                work.signal();
            }
            return durable ? committed : COMMITTED;
        } finally {
            lock.unlock();
        }
    }

    /** Called under the lock: the database works but the writer has not caught up with what was accepted. */
    private HubUnavailableException behind() {
        refused.increment();
        long now = System.nanoTime();
        if (!behindLogged || now - behindLoggedNanos > BEHIND_LOG_NANOS) {
            behindLogged = true;
            behindLoggedNanos = now;
            LOG.warn("the event store's writer is behind ({} events, {} bytes wait to be written): publishes get"
                    + " 503 until it catches up ({} refused so far)", buffer.events(), buffer.bytes(), refused.sum());
        }
        return new HubUnavailableException("the event store's writer is behind: " + buffer.events()
                + " events wait to be written (store.buffer-events, store.buffer-bytes); publish again shortly");
    }

    /**
     * Called under the lock while the database is down: drops the oldest events until the publish fits. While
     * it is down the writer holds no batch (it only probes), so every buffered event can be dropped, and an
     * empty buffer takes any publish.
     */
    private void makeRoom(int count, long bytes) {
        WriteBuffer.Entry oldest;
        while (!buffer.fits(count, bytes) && (oldest = buffer.dropOldest()) != null) {
            forget(oldest.firstId(), oldest.lastId());
        }
    }

    private void forget(long firstId, long lastId) {
        if (!overflowing) {
            overflowing = true;
            LOG.warn("the database is down and the event store's buffer is full: dropping the oldest unwritten"
                    + " events from the log (their ids are recorded, and resumes across them are told); live"
                    + " delivery goes on");
        }
        dropped.add(lastId - firstId + 1);
        missing.add(firstId, lastId);
    }

    /**
     * Writes what has accumulated, batch after batch. While the database is down it only probes, with
     * backoff, and takes no batch: events being written cannot be dropped, so a batch held through an outage
     * would make the newest events the ones dropped, rather than the oldest.
     */
    private void writeLoop() {
        long backoff = 0;
        while (true) {
            List<WriteBuffer.Entry> batch = List.of();
            try {
                lock.lockInterruptibly();
            } catch (InterruptedException e) {
                return;
            }
            try {
                while (!buffer.hasPending()) {
                    if (stopping) {
                        return;
                    }
                    if (!up) {
                        break;
                    }
                    writerIdle = true;
                    work.await();
                    writerIdle = false;
                }
                if (up) {
                    if (!durable) {
                        linger();
                    }
                    batch = buffer.take(batchEvents);
                }
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            boolean ok = batch.isEmpty() ? probe() : write(batch);
            if (ok) {
                backoff = 0;
                continue;
            }
            backoff = backoff == 0 ? FIRST_BACKOFF_MILLIS : Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
            try {
                lock.lockInterruptibly();
                try {
                    if (closing) {
                        return;
                    }
                    work.await(backoff, TimeUnit.MILLISECONDS);
                } finally {
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Called under the lock with events pending. */
    private void linger() throws InterruptedException {
        long left = LINGER_NANOS;
        while (buffer.events() < batchEvents && !stopping && left > 0) {
            left = work.awaitNanos(left);
        }
    }

    private boolean probe() {
        if (!database.reachable()) {
            return false;
        }
        markUp();
        return true;
    }

    private boolean write(List<WriteBuffer.Entry> batch) {
        int count = 0;
        List<EventRecord> records = new ArrayList<>();
        for (WriteBuffer.Entry entry : batch) {
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                records.add(record(id++, event));
            }
            count += entry.events().size();
        }
        long lastId = batch.get(batch.size() - 1).lastId();
        // Taken after the batch: a range dropped meanwhile lies beyond it and is saved with this commit or the next.
        List<MissingRanges.Range> ranges = missing.unsaved();
        try {
            database.write(records, lastId, ranges);
        } catch (RuntimeException e) {
            failed(e);
            return false;
        }
        missing.saved(ranges);
        lock.lock();
        try {
            buffer.committed();
            committedUpTo = lastId;
            overflowing = false;
            if (buffer.events() == 0) {
                drained.signalAll();
            }
        } finally {
            lock.unlock();
        }
        markUp();
        written.add(count);
        for (WriteBuffer.Entry entry : batch) {
            if (entry.afterCommit() != null) {
                try {
                    entry.afterCommit().run();
                } catch (RuntimeException e) {
                    LOG.error("delivering committed events {} to {} failed", entry.firstId(), entry.lastId(), e);
                }
            }
            if (entry.committed() != null) {
                entry.committed().complete(null);
            }
        }
        return true;
    }

    private void failed(RuntimeException e) {
        failedTransactions.increment();
        String reason = describe(e);
        List<WriteBuffer.Entry> refusedEntries = List.of();
        int buffered;
        lock.lock();
        try {
            if (durable) {
                // Nobody has seen these events: their publishers get 503 and may publish them again.
                refusedEntries = buffer.clear();
                drained.signalAll();
            } else {
                buffer.requeue();
            }
            buffered = buffer.events();
        } finally {
            lock.unlock();
        }
        lastError = reason;
        if (up) {
            up = false;
            downSince = Instant.now();
            LOG.warn("the event store cannot write: {}; live delivery goes on, {} events wait to be written, retrying",
                    reason, buffered);
        } else {
            LOG.debug("the event store still cannot write: {}", reason);
        }
        HubUnavailableException cause = new HubUnavailableException("the event store cannot write (" + reason
                + "); the event was not published");
        refusedEntries.forEach(entry -> entry.committed().completeExceptionally(cause));
    }

    private void markUp() {
        if (!up) {
            Instant since = downSince;
            up = true;
            downSince = null;
            LOG.info("the event store is writing again after {} s down", since == null ? 0
                    : Duration.between(since, Instant.now()).toSeconds());
        }
    }

    private static String describe(RuntimeException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    private static EventRecord record(long id, IncomingEvent event) {
        byte[] json = event.json();
        int from = IncomingEvent.ID_ZERO.length;
        String text = "{\"id\":" + id + "," + new String(json, from, json.length - from, StandardCharsets.UTF_8);
        return new EventRecord(id, event.eventType(), event.topicKey(), event.sourceKey(), event.timeStampMillis(),
                text);
    }

    /**
     * While the writer finds the database down, a read that needs the database (not only the buffer) would
     * wait for {@code store.timeout-seconds} and fail.
     */
    @Override
    public void requireReadable(long afterId, long upToId) {
        if (up) {
            return;
        }
        lock.lock();
        try {
            if (Math.max(afterId, missing.deletedUpTo()) >= Math.min(upToId, committedUpTo)) {
                return;
            }
        } finally {
            lock.unlock();
        }
        throw new HubUnavailableException("the event store cannot be read now (" + lastError
                + "); resume again later");
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        List<PublishedEvent> buffered = new ArrayList<>();
        List<ReplayGap> gaps;
        long committed;
        lock.lock();
        try {
            // Under the lock with the buffer: an event is buffered, committed or in a missing range, never two.
            buffer.collect(afterId, upToId, topicKeys, buffered);
            gaps = missing.within(afterId, upToId);
            committed = committedUpTo;
        } finally {
            lock.unlock();
        }
        List<EventRecord> rows = List.of();
        if (afterId < Math.min(upToId, committed)) {
            try {
                rows = database.read(afterId, Math.min(upToId, committed), topicKeys, maxEvents);
            } catch (RuntimeException e) {
                throw new HubUnavailableException("the event store cannot be read now (" + describe(e)
                        + "); resume again later");
            }
        }
        boolean metaFilter = !filter.metaData().isEmpty();
        List<PublishedEvent> events = new ArrayList<>();
        long lastRead = afterId;
        for (EventRecord row : rows) {
            PublishedEvent event = PublishedEvent.logged(row.id(), incoming(row, metaFilter));
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = row.id();
        }
        int room = maxEvents - rows.size();
        for (PublishedEvent event : buffered) {
            if (event.id() <= lastRead) {
                continue;
            }
            if (room-- == 0) {
                return partPage(events, gaps, lastRead);
            }
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = event.id();
        }
        // A full page that reached upToId left nothing behind: the stream goes on live rather than making the
        // client reconnect for nothing. (Whether it did used to depend on how much of the page the writer had
        // committed, which made one resume end and the same resume a moment later go on.)
        return rows.size() == maxEvents && lastRead < upToId ? partPage(events, gaps, lastRead)
                : new LogPage(events, gaps, true, upToId);
    }

    /** A page that ends at {@code lastRead}: the holes after it belong to the next page. */
    private static LogPage partPage(List<PublishedEvent> events, List<ReplayGap> gaps, long lastRead) {
        return new LogPage(events, gaps.stream().filter(gap -> gap.requestedAfterId() < lastRead).toList(), false,
                lastRead);
    }

    /** Turns a row back into the event the hub encoded; metadata are parsed only when a filter needs them. */
    private static IncomingEvent incoming(EventRecord row, boolean withMetaData) {
        String json = row.json();
        byte[] fields = json.substring(json.indexOf(',') + 1).getBytes(StandardCharsets.UTF_8);
        byte[] prefix = IncomingEvent.ID_ZERO;
        byte[] bytes = new byte[prefix.length + fields.length];
        System.arraycopy(prefix, 0, bytes, 0, prefix.length);
        System.arraycopy(fields, 0, bytes, prefix.length, fields.length);
        Map<String, String> metaData = Map.of();
        if (withMetaData) {
            try {
                Map<String, String> parsed = JsonMapper.get().readValue(json, Event.class).metaData();
                metaData = parsed == null ? Map.of() : parsed;
            } catch (IOException e) {
                throw new IllegalStateException("event " + row.id() + " in the log is not valid JSON", e);
            }
        }
        return new IncomingEvent(row.eventType(), row.topicKey(), row.sourceKey(), metaData,
                row.timeStampMillis(), bytes);
    }

    /**
     * A page of the log for {@code GET /eventhandler/mgmt/events}, as the JSON the endpoint answers.
     *
     * @param topicKeys empty for every topic
     */
    public byte[] query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit) {
        List<EventRecord> rows;
        try {
            rows = database.query(topicKeys, fromMillis, toMillis, afterId, limit);
        } catch (RuntimeException e) {
            throw new HubUnavailableException("the event store cannot be read now (" + describe(e) + ")");
        }
        StringBuilder out = new StringBuilder(64 + rows.size() * 128).append("{\"data\":[");
        for (int i = 0; i < rows.size(); i++) {
            out.append(i == 0 ? "" : ",").append(rows.get(i).json());
        }
        out.append("],\"count\":").append(rows.size());
        if (rows.size() == limit) {
            out.append(",\"nextAfterId\":").append(rows.get(rows.size() - 1).id());
        }
        return out.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Deletes what the retention settings no longer keep; run periodically. */
    public void enforceRetention() {
        long upTo = 0;
        try {
            if (!retentionAge.isZero()) {
                upTo = database.lastIdBefore(System.currentTimeMillis() - retentionAge.toMillis());
            }
            if (retentionEvents > 0) {
                upTo = Math.max(upTo, database.idBeforeNewest(retentionEvents));
            }
            if (upTo == 0) {
                return;
            }
            long deleted = database.deleteUpTo(upTo);
            missing.deletedUpTo(upTo);
            if (deleted > 0) {
                LOG.info("retention deleted {} events up to id {}", deleted, upTo);
            }
        } catch (RuntimeException e) {
            LOG.warn("retention could not run: {}; it will run again", describe(e));
        }
    }

    @Override
    public List<StoredSubscription> loadSubscriptions() {
        return database.subscriptions();
    }

    @Override
    public void saveSubscription(StoredSubscription subscription) {
        database.saveSubscription(subscription);
    }

    @Override
    public void deleteSubscription(long id) {
        database.deleteSubscription(id);
    }

    /** The store's state for the health endpoint and the metrics. */
    public Status status() {
        lock.lock();
        try {
            Instant since = downSince;
            return new Status(mode.name().toLowerCase(), up ? "UP" : "DOWN", buffer.events(), buffer.bytes(),
                    committedUpTo, missing.deletedUpTo(), missing.count(), written.sum(), dropped.sum(),
                    refused.sum(), failedTransactions.sum(), up ? null : lastError,
                    since == null ? null : since.toString());
        } finally {
            lock.unlock();
        }
    }

    /**
     * The event store's state.
     *
     * @param mode               async or sync
     * @param status             UP, or DOWN while the database cannot be written
     * @param bufferedEvents     events accepted but not yet written
     * @param bufferedBytes      the heap they hold, estimated as for {@code store.buffer-bytes}
     * @param lastLoggedId       the id of the last event written
     * @param deletedUpTo        retention deleted every event up to this id
     * @param missingRanges      ranges of ids above that the log does not hold (dropped during an outage, or
     *                           lost in a crash), each reported to the resumes that cross it
     * @param writtenEvents      events written since the start
     * @param droppedEvents      events dropped from the log because the buffer was full while the database was down
     * @param refusedPublishes   publishes refused with 503 because the writer was behind (backpressure)
     * @param failedTransactions write transactions that failed (and were retried)
     * @param lastError          why the database cannot be written, while DOWN
     * @param downSince          since when the store is DOWN
     */
    public record Status(String mode, String status, long bufferedEvents, long bufferedBytes, long lastLoggedId,
                         long deletedUpTo, int missingRanges, long writtenEvents, long droppedEvents,
                         long refusedPublishes, long failedTransactions, String lastError, String downSince) {

        /** Whether the store writes. */
        @JsonIgnore
        public boolean isUp() {
            return "UP".equals(status);
        }
    }

    /**
     * Waits until everything appended is written, or the deadline passes; no more appends may come (the
     * hub is closed). The writer then stops.
     *
     * @return whether everything was written
     */
    public boolean drain(Duration timeout) throws InterruptedException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            stopping = true;
            work.signalAll();
            while (buffer.events() > 0 && left > 0) {
                left = drained.awaitNanos(left);
            }
            return buffer.events() == 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the writer and closes the database. If everything was written, the log records a clean stop,
     * so that the next start continues the sequence exactly.
     */
    public void close() {
        boolean clean;
        long lastId;
        lock.lock();
        try {
            stopping = true;
            closing = true;
            work.signalAll();
            clean = buffer.events() == 0 && up;
            lastId = appendedUpTo;
        } finally {
            lock.unlock();
        }
        try {
            // Not interrupted unless it is stuck: an interrupt during H2's file I/O breaks its file channel.
            writer.join(TimeUnit.SECONDS.toMillis(WRITER_STOP_SECONDS));
            if (writer.isAlive()) {
                writer.interrupt();
                writer.join(TimeUnit.SECONDS.toMillis(WRITER_STOP_SECONDS));
            }
            if (clean) {
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
        } catch (RuntimeException e) {
            LOG.warn("could not record the clean stop in the event store: {}", describe(e));
        } finally {
            database.close();
        }
    }
}

package eu.arrowhead.eventhandler.store;

import com.fasterxml.jackson.annotation.JsonIgnore;
import eu.arrowhead.eventhandler.api.Event;
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
import java.util.ArrayDeque;
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
 * <p>How an event travels: the hub appends it here under its own lock (a non-blocking add to a bounded
 * buffer, in id order); the writer takes whatever has accumulated, up to {@code store.batch-events}, and
 * writes it in one transaction. In sync mode the publishes waiting on that transaction share it (group
 * commit): under load one commit confirms many publishes, so the rate is bounded by the database's
 * transactions per second times the batch, not by the commit latency.
 *
 * <p>When the database fails, live delivery is not affected: in async mode the buffer keeps the newest
 * {@code store.buffer-events} events and the writer retries with backoff; in sync mode the waiting
 * publishes fail at once with 503 and new ones are refused until the database answers again.
 *
 * <p>Events leave the buffer only after their commit, so a replay that looks at the buffer first and the
 * database second sees every event exactly once.
 */
public final class EventStore implements EventJournal, SubscriptionStore {
    private static final Logger LOG = LoggerFactory.getLogger(EventStore.class);
    private static final long FIRST_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 5_000;
    /**
     * In async mode the writer lets events gather this long before a transaction that would not be full:
     * nobody waits for it, and a sequential publisher at a few thousand events a second then costs a few
     * hundred transactions a second instead of one per event, which leaves the CPU to delivery.
     */
    private static final long WRITER_STOP_SECONDS = 5;
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final EventDatabase database;
    private final EventHandlerConfig.StoreMode mode;
    private final boolean durable;
    private final int batchEvents;
    private final int bufferEvents;
    private final long lastIdAtStart;
    private final Duration retentionAge;
    private final long retentionEvents;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition drained = lock.newCondition();
    /** Appended, not yet taken by the writer; guarded by {@link #lock}. */
    private final ArrayDeque<Entry> pending = new ArrayDeque<>();
    /** Taken by the writer, not yet committed; guarded by {@link #lock}. */
    private List<Entry> inFlight = List.of();
    private int bufferedEvents;
    private long appendedUpTo;
    private long committedUpTo;
    private long missingUpTo;
    private boolean stopping;
    /** Set by {@link #close}: the writer gives up on a database that still fails. */
    private boolean closing;
    /** Whether the writer waits for events; guarded by {@link #lock}. */
    private boolean writerIdle;
    /** Whether events have been dropped since the last successful write; guarded by {@link #lock}. */
    private boolean overflowing;
    private volatile boolean up = true;
    private volatile String lastError;
    private volatile Instant downSince;
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder failedTransactions = new LongAdder();
    private final Thread writer;

    /** Events appended together: one publish request. */
    private record Entry(long firstId, List<IncomingEvent> events, Runnable afterCommit,
                         CompletableFuture<Void> committed) {
        long lastId() {
            return firstId + events.size() - 1;
        }
    }

    private EventStore(EventDatabase database, EventHandlerConfig config, long lastIdAtStart, long missingUpTo) {
        this.database = database;
        this.mode = config.storeMode();
        this.durable = mode == EventHandlerConfig.StoreMode.SYNC;
        this.batchEvents = config.storeBatchEvents();
        this.bufferEvents = config.storeBufferEvents();
        this.lastIdAtStart = lastIdAtStart;
        this.appendedUpTo = lastIdAtStart;
        this.committedUpTo = lastIdAtStart;
        this.missingUpTo = missingUpTo;
        this.retentionAge = config.storeRetentionAge();
        this.retentionEvents = config.storeRetentionEvents();
        this.writer = new Thread(this::writeLoop, "eh-store-writer");
        writer.setDaemon(true);
    }

    /**
     * Opens the store: connects, migrates the schema, and finds where the sequence goes on.
     *
     * @throws SQLException if the database cannot be reached or migrated: the server does not start
     *                      without its log, since it could not continue the sequence
     */
    public static EventStore open(EventHandlerConfig config) throws SQLException {
        EventDatabase database = EventDatabase.open(config);
        try {
            EventDatabase.State state = database.state();
            long start = state.lastId();
            if (state.cleanStop() != state.lastId()) {
                // The last run may have delivered events it never wrote: skip as many ids as it could have
                // held unwritten, so that no id is given to two different events.
                start += config.storeBufferEvents();
                LOG.warn("the previous run did not stop cleanly: events it had not yet written are not in the"
                        + " log; ids continue after {} rather than {} so that none is given twice", start,
                        state.lastId());
            }
            database.setState(Map.of(StateRecord.LAST_ID, start, StateRecord.CLEAN_STOP, -1L));
            EventStore store = new EventStore(database, config, start, state.missingUpTo());
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
        lock.lock();
        try {
            appendedUpTo = firstId + count - 1;
            if (durable) {
                if (!up) {
                    return CompletableFuture.failedFuture(new HubUnavailableException("the event store is"
                            + " unavailable (" + lastError + "); publish again later"));
                }
                if (bufferedEvents + count > bufferEvents) {
                    return CompletableFuture.failedFuture(new HubUnavailableException("the event store is"
                            + " behind: its buffer of " + bufferEvents + " events is full (store.buffer-events)"));
                }
                CompletableFuture<Void> committed = new CompletableFuture<>();
                add(new Entry(firstId, events, afterCommit, committed));
                return committed;
            }
            if (bufferedEvents + count > bufferEvents && !makeRoom(count)) {
                forget(firstId + count - 1, count);
                return COMMITTED;
            }
            add(new Entry(firstId, events, null, null));
            return COMMITTED;
        } finally {
            lock.unlock();
        }
    }

    private void add(Entry entry) {
        pending.addLast(entry);
        bufferedEvents += entry.events().size();
        // Woken only when it waits for work or a batch is full: a writer that lingers or writes would
        // otherwise be woken for nothing once per publish.
        if (writerIdle || bufferedEvents >= batchEvents) {
            writerIdle = false;
            work.signal();
        }
    }

    /** Drops the oldest buffered events not being written, until {@code count} more fit. */
    private boolean makeRoom(int count) {
        while (bufferedEvents + count > bufferEvents && !pending.isEmpty()) {
            Entry oldest = pending.pollFirst();
            bufferedEvents -= oldest.events().size();
            forget(oldest.lastId(), oldest.events().size());
        }
        return bufferedEvents + count <= bufferEvents;
    }

    private void forget(long upToId, int count) {
        if (!overflowing) {
            overflowing = true;
            LOG.warn("the event store's buffer is full (store.buffer-events={}): dropping the oldest unwritten"
                    + " events from the log; live delivery goes on", bufferEvents);
        }
        dropped.add(count);
        missingUpTo = Math.max(missingUpTo, upToId);
    }

    private void writeLoop() {
        long backoff = 0;
        while (true) {
            List<Entry> batch;
            long missing;
            try {
                lock.lockInterruptibly();
            } catch (InterruptedException e) {
                return;
            }
            try {
                while (pending.isEmpty()) {
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
                if (!durable && up) {
                    linger();
                }
                batch = takeBatch();
                missing = missingUpTo;
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            boolean ok = batch.isEmpty() ? probe() : write(batch, missing);
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
        while (bufferedEvents < batchEvents && !stopping && left > 0) {
            left = work.awaitNanos(left);
        }
    }

    private List<Entry> takeBatch() {
        List<Entry> batch = new ArrayList<>();
        int events = 0;
        while (!pending.isEmpty() && (batch.isEmpty() || events + pending.peekFirst().events().size() <= batchEvents)) {
            Entry entry = pending.pollFirst();
            batch.add(entry);
            events += entry.events().size();
        }
        inFlight = batch;
        return batch;
    }

    private boolean probe() {
        if (!database.reachable()) {
            return false;
        }
        markUp();
        return true;
    }

    private boolean write(List<Entry> batch, long missing) {
        int count = 0;
        List<EventRecord> records = new ArrayList<>();
        for (Entry entry : batch) {
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                records.add(record(id++, event));
            }
            count += entry.events().size();
        }
        long lastId = batch.get(batch.size() - 1).lastId();
        try {
            database.write(records, lastId, missing);
        } catch (RuntimeException e) {
            failed(batch, e);
            return false;
        }
        lock.lock();
        try {
            inFlight = List.of();
            bufferedEvents -= count;
            committedUpTo = lastId;
            overflowing = false;
            if (bufferedEvents == 0) {
                drained.signalAll();
            }
        } finally {
            lock.unlock();
        }
        markUp();
        written.add(count);
        for (Entry entry : batch) {
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

    private void failed(List<Entry> batch, RuntimeException e) {
        failedTransactions.increment();
        String reason = describe(e);
        List<Entry> refused = new ArrayList<>();
        int buffered;
        lock.lock();
        try {
            inFlight = List.of();
            if (durable) {
                // Nobody has seen these events: their publishers get 503 and may publish them again.
                refused.addAll(batch);
                refused.addAll(pending);
                pending.clear();
                bufferedEvents = 0;
                drained.signalAll();
            } else {
                for (int i = batch.size() - 1; i >= 0; i--) {
                    pending.addFirst(batch.get(i));
                }
            }
            buffered = bufferedEvents;
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
        refused.forEach(entry -> entry.committed().completeExceptionally(cause));
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
            if (Math.max(afterId, missingUpTo) >= Math.min(upToId, committedUpTo)) {
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
        long missing;
        long committed;
        lock.lock();
        try {
            collect(inFlight, afterId, upToId, topicKeys, buffered);
            collect(pending, afterId, upToId, topicKeys, buffered);
            missing = missingUpTo;
            committed = committedUpTo;
        } finally {
            lock.unlock();
        }
        long from = Math.max(afterId, missing);
        List<EventRecord> rows = List.of();
        if (from < Math.min(upToId, committed)) {
            try {
                rows = database.read(from, Math.min(upToId, committed), topicKeys, maxEvents);
            } catch (RuntimeException e) {
                throw new HubUnavailableException("the event store cannot be read now (" + describe(e)
                        + "); resume again later");
            }
        }
        boolean metaFilter = !filter.metaData().isEmpty();
        List<PublishedEvent> events = new ArrayList<>();
        long lastRead = from;
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
                return new LogPage(events, missing, false, lastRead);
            }
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = event.id();
        }
        // A full page that reached upToId left nothing behind: the stream goes on live rather than making the
        // client reconnect for nothing. (Whether it did used to depend on how much of the page the writer had
        // committed, which made one resume end and the same resume a moment later go on.)
        return rows.size() == maxEvents && lastRead < upToId ? new LogPage(events, missing, false, lastRead)
                : new LogPage(events, missing, true, upToId);
    }

    private static void collect(Iterable<Entry> entries, long afterId, long upToId, Set<String> topicKeys,
                                List<PublishedEvent> into) {
        for (Entry entry : entries) {
            if (entry.lastId() <= afterId || entry.firstId() > upToId) {
                continue;
            }
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                if (id > afterId && id <= upToId && topicKeys.contains(event.topicKey())) {
                    into.add(PublishedEvent.logged(id, event));
                }
                id++;
            }
        }
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
            lock.lock();
            try {
                missingUpTo = Math.max(missingUpTo, upTo);
            } finally {
                lock.unlock();
            }
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
            return new Status(mode.name().toLowerCase(), up ? "UP" : "DOWN", bufferedEvents, committedUpTo,
                    missingUpTo, written.sum(), dropped.sum(), failedTransactions.sum(), up ? null : lastError,
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
     * @param lastLoggedId       the id of the last event written
     * @param missingUpTo        events up to this id are no longer in the log (retention, or dropped)
     * @param writtenEvents      events written since the start
     * @param droppedEvents      events dropped from the log because the buffer was full
     * @param failedTransactions write transactions that failed (and were retried)
     * @param lastError          why the database cannot be written, while DOWN
     * @param downSince          since when the store is DOWN
     */
    public record Status(String mode, String status, long bufferedEvents, long lastLoggedId, long missingUpTo,
                         long writtenEvents, long droppedEvents, long failedTransactions, String lastError,
                         String downSince) {

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
            while (bufferedEvents > 0 && left > 0) {
                left = drained.awaitNanos(left);
            }
            return bufferedEvents == 0;
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
            clean = bufferedEvents == 0 && up;
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
                database.setState(Map.of(StateRecord.LAST_ID, lastId, StateRecord.CLEAN_STOP, lastId));
                LOG.info("event store closed cleanly after id {}", lastId);
            } else {
                LOG.warn("event store closed with events unwritten; the next start skips ids to stay unique");
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

package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event store's writer: the events accepted and not yet committed ({@link WriteBuffer}), the thread that
 * commits them in batches to a {@link BatchSink}, and whether the database takes them (up or down).
 *
 * <p>How an event travels: the event log appends it under its own lock (a non-blocking add to the bounded buffer,
 * in id order); the writer thread takes whatever has accumulated, up to {@code store.batch-events}, and
 * writes it in one transaction. In sync mode the publishes waiting on that transaction share it (group
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
 * <p>Events leave the buffer only after their commit, so a read that takes {@link #unwritten} first and the
 * database second sees every event exactly once. Thread-safe.
 */
final class JournalWriter {
    private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);
    private static final long FIRST_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 5_000;
    private static final long STOP_SECONDS = 5;
    /**
     * In async mode the writer lets events gather this long before a transaction that would not be full:
     * nobody waits for it, and what a crash can lose is bounded by {@code store.buffer-events}, not by time.
     * Most of a transaction's cost does not depend on its size (H2 writes a new chunk of every B-tree page
     * the commit touched, and the last id is updated once), so a sequential publisher at a few thousand
     * events a second costs at most 50 commits a second instead of hundreds (2 ms before issue 13: the
     * writer's CPU per event in docs/performance.md).
     */
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * In async mode the writer forces its commits to disk at most this often (in sync mode after every commit,
     * before any publish of it is answered): what a power cut can take from the log is then the buffer plus
     * the last second of commits. An fsync a second costs nothing measurable.
     */
    private static final long ASYNC_FORCE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Refusals for backpressure come in bursts: the log says so at most this often. */
    private static final long BEHIND_LOG_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final BatchSink sink;
    private final IdMark ids;
    private final EventHandlerConfig.StoreMode mode;
    private final boolean durable;
    private final int batchEvents;
    private final MissingRanges missing;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition drained = lock.newCondition();
    /** Guarded by {@link #lock}, as are the fields up to {@link #behindLogged}. */
    private final WriteBuffer buffer;
    private long appendedUpTo;
    private long committedUpTo;
    private boolean stopping;
    /** Set by {@link #stop}: the writer gives up on a database that still fails. */
    private boolean closing;
    /** Whether the writer waits for events. */
    private boolean writerIdle;
    /** Whether events have been dropped since the last successful write. */
    private boolean overflowing;
    /** When a refusal for backpressure was last logged at WARN. */
    private long behindLoggedNanos;
    private boolean behindLogged;
    /** Whether writes work, and the outage the log and health report. */
    private final WriteOutage outage = new WriteOutage();
    /** Whether the last write failed; its commit may still have happened. Only the writer thread uses it. */
    private boolean lastWriteFailed;
    /** While down: a probe's write committed, so the next batch is tried. Only the writer thread uses it. */
    private boolean probeAnswered;
    /** When the writer last forced its commits to disk. Only the writer thread uses it. */
    private long forcedNanos = System.nanoTime();
    /** Async mode: a commit has not been forced yet; {@link #forceIdleCommits} forces it if the writer does not. */
    private volatile boolean unforced;
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder failedTransactions = new LongAdder();
    private final Thread thread;

    /**
     * @param lastId  the last id of the sequence before the first append: what is committed so far
     * @param missing the log's holes: the writer adds the ranges it drops and saves them with its next batch
     */
    JournalWriter(BatchSink sink, IdMark ids, EventHandlerConfig.StoreMode mode, int batchEvents, WriteBuffer buffer,
                  long lastId, MissingRanges missing) {
        this.sink = sink;
        this.ids = ids;
        this.mode = mode;
        this.durable = mode == EventHandlerConfig.StoreMode.SYNC;
        this.batchEvents = batchEvents;
        this.buffer = buffer;
        this.appendedUpTo = lastId;
        this.committedUpTo = lastId;
        this.missing = missing;
        this.thread = new Thread(this::writeLoop, "eh-store-writer");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** See {@link EventJournal#append}: called under the log's lock, never blocks. */
    CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, PublishKey key, Runnable afterCommit) {
        int count = events.size();
        long bytes = WriteBuffer.bytesOf(events);
        lock.lock();
        try {
            if (durable && !outage.writable()) {
                throw down();
            }
            if (!ids.allows(firstId + count - 1)) {
                throw new UnavailableException("the event store has not yet recorded the next block of ids on"
                        + " disk (store.id-mark-file); publish again shortly");
            }
            if (!buffer.fits(count, bytes)) {
                if (durable || outage.writable()) {
                    throw behind();
                }
                makeRoom(count, bytes);
            }
            appendedUpTo = firstId + count - 1;
            CompletableFuture<Void> committed = durable ? new CompletableFuture<>() : null;
            long keyedAt = key.present() ? System.currentTimeMillis() : 0;
            buffer.add(new WriteBuffer.Entry(firstId, events, key, keyedAt, bytes, afterCommit, committed));
            // Woken only when it waits for work or a batch is full: a writer that lingers or writes would
            // otherwise be woken for nothing once per publish.
            if (writerIdle || buffer.events() >= batchEvents) {
                writerIdle = false;
                work.signal();
            }
            return durable ? committed : EventJournal.COMMITTED;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link #append}'s refusals, made before the events exist (before their body is even parsed), and
     * counted like them. In async mode with the database down append drops the oldest events instead, so
     * nothing is refused here then.
     *
     * @param bodyBytes the size of the publish's body
     */
    void requireRoom(long bodyBytes) {
        lock.lock();
        try {
            if (durable && !outage.writable()) {
                throw down();
            }
            if (outage.writable() && !buffer.fitsBody(bodyBytes)) {
                throw behind();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Called under the lock: in sync mode with the database down, a publish cannot be committed. */
    private UnavailableException down() {
        return new UnavailableException("the event store is unavailable (" + outage.lastError() + "); publish again later");
    }

    /** Called under the lock: the database works but the writer has not caught up with what was accepted. */
    private UnavailableException behind() {
        refused.increment();
        long now = System.nanoTime();
        if (!behindLogged || now - behindLoggedNanos > BEHIND_LOG_NANOS) {
            behindLogged = true;
            behindLoggedNanos = now;
            LOG.warn("the event store's writer is behind ({} events, {} bytes wait to be written): publishes get"
                    + " 503 until it catches up ({} refused so far)", buffer.events(), buffer.bytes(), refused.sum());
        }
        return new UnavailableException("the event store's writer is behind: " + buffer.events()
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
            if (!overflowing) {
                overflowing = true;
                LOG.warn("the database is down and the event store's buffer is full: dropping the oldest unwritten"
                        + " events from the log (their ids are recorded, and resumes across them are told); live"
                        + " delivery goes on");
            }
            dropped.add(oldest.events().size());
            missing.add(oldest.firstId(), oldest.lastId());
        }
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
                    if (!outage.writable() && !probeAnswered) {
                        break;
                    }
                    long settleLeft = outage.settling() ? outage.settleLeftNanos() : -1;
                    if (settleLeft == 0) {
                        // Writes work again and none failed for a while: a probe ends the outage, also when
                        // nobody publishes.
                        break;
                    }
                    writerIdle = true;
                    if (settleLeft > 0) {
                        work.awaitNanos(settleLeft);
                    } else {
                        work.await();
                    }
                    writerIdle = false;
                }
                if (outage.writable() || probeAnswered) {
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

    /**
     * While down with nothing to write, before the next batch is tried, or to end an outage once writes have
     * worked long enough: whether a write commits ({@link BatchSink#takesWrites}). A database that only answers is
     * not enough: H2 on a full disk opens its file again and answers every query, then fails the next commit.
     */
    private boolean probe() {
        try {
            sink.takesWrites();
        } catch (RuntimeException e) {
            outage.failed(EventDatabase.describe(e), bufferedEvents());
            failedTransactions.increment();
            return false;
        }
        lock.lock();
        try {
            if (buffer.hasPending()) {
                probeAnswered = true;
                return true;
            }
        } finally {
            lock.unlock();
        }
        outage.succeeded();
        return true;
    }

    private int bufferedEvents() {
        lock.lock();
        try {
            return buffer.events();
        } finally {
            lock.unlock();
        }
    }

    private boolean write(List<WriteBuffer.Entry> batch) {
        long lastId = batch.get(batch.size() - 1).lastId();
        int count = 0;
        for (WriteBuffer.Entry entry : batch) {
            count += entry.events().size();
        }
        // Taken after the batch: a range dropped meanwhile lies beyond it and is saved with this commit or the next.
        List<MissingRanges.Range> ranges = missing.unsaved();
        try {
            List<WriteBuffer.Entry> unwritten = lastWriteFailed ? notYetCommitted(batch) : batch;
            if (unwritten.isEmpty()) {
                // The failed attempt had committed it all: the ranges go with the next commit or the clean stop.
                ranges = List.of();
            } else {
                sink.write(unwritten, ranges);
            }
            long now = System.nanoTime();
            if (durable || now - forcedNanos >= ASYNC_FORCE_NANOS) {
                sink.force();
                forcedNanos = now;
                unforced = false;
            } else {
                unforced = true;
            }
        } catch (RuntimeException e) {
            lastWriteFailed = true;
            probeAnswered = false;
            failed(e);
            return false;
        }
        lastWriteFailed = false;
        probeAnswered = false;
        missing.saved(ranges);
        // Before drain() can see the buffer empty, so that a drained writer's status adds up.
        written.add(count);
        outage.succeeded();
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

    /**
     * The entries of a batch after the last id the log has recorded. The batch after a failed write starts
     * with the failed one's entries (they are requeued in front), and that write either committed all of them
     * or none, so this is a suffix of whole entries.
     */
    private List<WriteBuffer.Entry> notYetCommitted(List<WriteBuffer.Entry> batch) {
        long inLog = sink.lastWrittenId();
        int from = 0;
        while (from < batch.size() && batch.get(from).lastId() <= inLog) {
            from++;
        }
        if (from > 0) {
            LOG.info("the event store had committed events up to {} although the write reported a failure;"
                    + " they are not written twice", inLog);
        }
        return batch.subList(from, batch.size());
    }

    private void failed(RuntimeException e) {
        String reason = EventDatabase.describe(e);
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
        // Before the refusals are answered: a publisher told 503 finds health saying so.
        outage.failed(reason, buffered);
        failedTransactions.increment();
        UnavailableException cause = new UnavailableException("the event store cannot write (" + reason
                + "); the event was not published");
        refusedEntries.forEach(entry -> entry.committed().completeExceptionally(cause));
    }

    /** The last id the database has committed. */
    long committedUpTo() {
        lock.lock();
        try {
            return committedUpTo;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Async mode, every second off the writer thread: forces the commits of a writer that went idle before its
     * next force was due, so that a power cut costs at most about a second of commits however the load stops.
     */
    void forceIdleCommits() {
        if (!unforced) {
            return;
        }
        unforced = false;
        try {
            sink.force();
        } catch (RuntimeException e) {
            unforced = true;
            LOG.debug("the event store's commits were not forced to disk: {}", e.toString());
        }
    }

    /**
     * While the writer finds the database down, a read that needs the database (not only the buffer) would
     * wait for {@code store.timeout-seconds} and fail: it is refused at once.
     *
     * @throws UnavailableException if ({@code afterId}, {@code upToId}] holds committed events the
     *                                 database must be read for while it is down
     */
    void requireReadable(long afterId, long upToId) {
        if (outage.writable()) {
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
        throw new UnavailableException("the event store cannot be read now (" + outage.lastError()
                + "); resume again later");
    }

    /**
     * What a read of ids ({@code afterId}, {@code upToId}] must take from outside the database, all at one
     * moment: an event is buffered, committed or in a missing range, never two.
     *
     * @param buffered      the buffered events of the topics in the span, in id order
     * @param gaps          the holes in the span (see {@link MissingRanges#within})
     * @param committedUpTo the database holds the events up to this id
     * @param deletedUpTo   retention deletes (or has deleted) every event up to this id: a gap says so, and the
     *                      database is read only after it
     */
    record Unwritten(List<PublishedEvent> buffered, List<ReplayGap> gaps, long committedUpTo, long deletedUpTo) {
    }

    Unwritten unwritten(long afterId, long upToId, Set<String> topicKeys) {
        List<PublishedEvent> buffered = new ArrayList<>();
        lock.lock();
        try {
            buffer.collect(afterId, upToId, topicKeys, buffered);
            return new Unwritten(buffered, missing.within(afterId, upToId), committedUpTo, missing.deletedUpTo());
        } finally {
            lock.unlock();
        }
    }

    EventStore.Status status() {
        lock.lock();
        try {
            Instant since = outage.downSince();
            boolean down = outage.down();
            return new EventStore.Status(mode.name().toLowerCase(), down ? "DOWN" : "UP", buffer.events(),
                    buffer.bytes(), committedUpTo, missing.deletedUpTo(), missing.count(), written.sum(),
                    dropped.sum(), refused.sum(), failedTransactions.sum(), down ? outage.lastError() : null,
                    since == null ? null : since.toString(), List.of());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until everything appended is written, or the deadline passes; no more appends may come (the
     * log is closed). The writer then stops.
     *
     * @return whether everything was written
     */
    boolean drain(Duration timeout) throws InterruptedException {
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
     * Stops the writer: it finishes the transaction it is in, if any, and gives up on a database that
     * fails. Never interrupted: an interrupt inside a database driver's I/O may break its connection or file.
     * A writer still inside a transaction after {@value #STOP_SECONDS} s is left to it (a daemon thread).
     *
     * @return the last id appended, if every event appended was written; empty if some were not
     */
    OptionalLong stop() throws InterruptedException {
        boolean clean;
        long lastId;
        lock.lock();
        try {
            stopping = true;
            closing = true;
            work.signalAll();
            clean = buffer.events() == 0 && outage.writable();
            lastId = appendedUpTo;
        } finally {
            lock.unlock();
        }
        thread.join(TimeUnit.SECONDS.toMillis(STOP_SECONDS));
        if (thread.isAlive()) {
            // Still inside a transaction: what it writes is not known, so the stop is not a clean one.
            return OptionalLong.empty();
        }
        return clean ? OptionalLong.of(lastId) : OptionalLong.empty();
    }
}

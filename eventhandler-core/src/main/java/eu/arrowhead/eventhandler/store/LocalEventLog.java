package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A single node's event log: its own sequence of ids, the {@link EventJournal} that keeps the events (the
 * database, or nowhere with {@code store.mode=off}) and the answers to keyed publishes ({@link IdempotencyKeys}).
 *
 * <p>One lock orders a publish from its ids to its delivery: the next ids, the journal's append, and, unless the
 * journal is durable, the hub's {@link Hub#deliver} on the publishing thread, so that the journal and every
 * subscriber receive events in id order, and an idle subscriber is written to by the publisher itself. A durable
 * journal ({@code store.mode=sync}) delivers from its writer once the events are committed; {@link #append} then
 * waits for the commit, and its 200 means "in the log".
 *
 * <p>Lock order: this log's lock, then the hub's (and under it the subscribers' monitors), or this log's lock,
 * then the journal writer's. The writer runs a durable journal's deliveries holding no lock of its own, and the
 * hub asks {@link #mayStillDeliver} under its lock, which reads a volatile and takes no lock.
 */
public final class LocalEventLog implements EventLog {
    private final ReentrantLock lock = new ReentrantLock();
    private final EventJournal journal;
    private final IdempotencyKeys keys;
    private final Duration commitTimeout;
    private final long lastIdAtStart;
    private Hub hub;
    /** Set once the stop begins: no more appends, so that the journal's last id is final when it drains. */
    private boolean closed;
    /** The last id given; written under the lock, read by resumes without it. */
    private volatile long lastGiven;

    /**
     * Takes back into {@code keys} the keyed publishes the journal kept from earlier runs
     * ({@link IdempotencyKeys#restore}).
     *
     * @param commitTimeout longest wait for a durable journal's commit ({@code store.sync-timeout-seconds})
     */
    public LocalEventLog(EventJournal journal, IdempotencyKeys keys, Duration commitTimeout) {
        this.journal = journal;
        this.keys = keys;
        this.commitTimeout = commitTimeout;
        this.lastIdAtStart = journal.lastId();
        this.lastGiven = lastIdAtStart;
        keys.restore(journal);
    }

    /** Hands the log's events to {@code hub} from now on; called once, before the first append. */
    public void deliverTo(Hub hub) {
        lock.lock();
        try {
            this.hub = hub;
        } finally {
            lock.unlock();
        }
    }

    /** The answers to keyed publishes, for the metrics. */
    public IdempotencyKeys idempotencyKeys() {
        return keys;
    }

    /**
     * Takes no more appends: they are refused as the stop's. Called before the journal drains, so that no event
     * gets an id after the journal recorded its last one.
     */
    public void close() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long[] answered(PublishKey key) {
        return keys.answered(key);
    }

    @Override
    public CompletableFuture<long[]> append(List<IncomingEvent> events, PublishKey key, Publication publication) {
        return CompletableFuture.completedFuture(idsOf(events, key, publication));
    }

    /** Appends the events, or finds the key's earlier request: their ids (in {@code sync} mode once committed). */
    private long[] idsOf(List<IncomingEvent> events, PublishKey key, Publication publication) {
        if (!key.present()) {
            return ids(appendNew(events, key, publication), events.size());
        }
        IdempotencyKeys.Claim claim = keys.claim(key);
        if (!claim.fresh()) {
            return ids(claim.firstId(), claim.count());
        }
        try {
            Appended appended = appendNew(events, key, publication);
            claim.accepted(appended.firstId(), events.size(), appended.committed());
            return ids(appended, events.size());
        } catch (RuntimeException e) {
            claim.failed();
            throw e;
        }
    }

    /**
     * Events that have their ids and are handed to the journal.
     *
     * @param committed completes once the journal has them, if it is durable; else complete
     */
    private record Appended(long firstId, CompletableFuture<Void> committed) {
    }

    private Appended appendNew(List<IncomingEvent> events, PublishKey key, Publication publication) {
        Appended appended;
        lock.lock();
        try {
            if (closed) {
                throw new UnavailableException("the Event Handler is shutting down");
            }
            if (hub == null) {
                throw new IllegalStateException("the log appends only once it delivers to a hub (deliverTo)");
            }
            long first = lastGiven + 1;
            hub.admit(first, events);
            // The journal first: when it refuses the events (its writer is behind), they take no ids and reach
            // nobody, so a 503 means the event does not exist.
            Hub deliverer = hub;
            boolean durable = journal.durable();
            appended = new Appended(first, journal.append(first, events, key,
                    durable ? () -> deliverer.deliver(first, events, Publication.NONE) : null));
            // Given once the journal has them, whatever happens next: the next publish must not take these ids.
            lastGiven = first + events.size() - 1;
            if (!durable) {
                hub.deliver(first, events, publication);
            }
        } finally {
            lock.unlock();
        }
        return appended;
    }

    /** The ids of appended events, once committed if the journal is durable (the commit is awaited here). */
    private long[] ids(Appended appended, int count) {
        CompletableFuture<Void> committed = appended.committed();
        if (!committed.isDone() || committed.isCompletedExceptionally()) {
            awaitCommit(committed);
        }
        return ids(appended.firstId(), count);
    }

    private void awaitCommit(CompletableFuture<Void> committed) {
        try {
            committed.get(commitTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new UnavailableException("the event store did not commit the event within "
                    + commitTimeout.toSeconds() + " s (store.sync-timeout-seconds); it may still be"
                    + " logged and delivered");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof UnavailableException unavailable ? unavailable
                    : new UnavailableException("the event store failed: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("the Event Handler is shutting down");
        }
    }

    private static long[] ids(long firstId, int count) {
        long[] ids = new long[count];
        for (int i = 0; i < count; i++) {
            ids[i] = firstId + i;
        }
        return ids;
    }

    @Override
    public void requireRoom(long bodyBytes) {
        journal.requireRoom(bodyBytes);
    }

    @Override
    public boolean appendWaits() {
        return journal.durable();
    }

    @Override
    public long lastId() {
        return lastIdAtStart;
    }

    @Override
    public boolean mayStillDeliver(long id) {
        return id <= lastGiven;
    }

    @Override
    public boolean replays() {
        return journal.replays();
    }

    @Override
    public void requireReadable(long afterId, long upToId) {
        journal.requireReadable(afterId, upToId);
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        return journal.read(afterId, upToId, topicKeys, filter, maxEvents);
    }
}

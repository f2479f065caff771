package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The journal of {@code store.mode=off} (it keeps nothing), through which a test sees the hub give ids: it can wait
 * until an id has been given, and hold the publish that gives one inside the hub's lock, so that another thread
 * queues for the lock exactly there.
 */
public final class WatchedJournal implements EventJournal {
    private final long lastIdBefore;
    private long lastAppended;
    private long holdAtId = Long.MAX_VALUE;
    private CountDownLatch holding;
    private CountDownLatch letGo;

    public WatchedJournal() {
        this(0);
    }

    /** @param lastIdBefore the last id before this start: the hub's ids go on after it */
    public WatchedJournal(long lastIdBefore) {
        this.lastIdBefore = lastIdBefore;
        this.lastAppended = lastIdBefore;
    }

    @Override
    public long lastId() {
        return lastIdBefore;
    }

    @Override
    public boolean durable() {
        return false;
    }

    @Override
    public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, Runnable afterCommit) {
        long last = firstId + events.size() - 1;
        CountDownLatch held = null;
        CountDownLatch heldHere = null;
        synchronized (this) {
            if (firstId <= holdAtId && holdAtId <= last) {
                held = letGo;
                heldHere = holding;
                holdAtId = Long.MAX_VALUE;
            }
        }
        if (held != null) {
            heldHere.countDown();
            try {
                if (!held.await(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("a publish held in the hub's lock was never let go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        synchronized (this) {
            lastAppended = last;
            notifyAll();
        }
        return COMMITTED;
    }

    /**
     * Holds the publish that gives {@code id}, inside the hub's lock and before its events are delivered:
     * {@code holding} opens once it is held, and it goes on once {@code letGo} opens.
     */
    public synchronized void holdAt(long id, CountDownLatch holding, CountDownLatch letGo) {
        this.holdAtId = id;
        this.holding = holding;
        this.letGo = letGo;
    }

    /** Waits until the hub has given {@code id} (its publish may still be delivering). */
    public synchronized void awaitGiven(long id, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (lastAppended < id) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("the hub has given ids up to " + lastAppended + ", not " + id);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    @Override
    public boolean replays() {
        return false;
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        throw new UnavailableException("this journal keeps nothing");
    }
}

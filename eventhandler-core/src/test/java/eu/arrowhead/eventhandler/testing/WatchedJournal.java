package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The journal of {@code store.mode=off} (it keeps nothing), through which a test sees the log give ids: it can wait
 * until an id has been given.
 */
public final class WatchedJournal implements EventJournal {
    private final long lastIdBefore;
    private long lastAppended;

    public WatchedJournal() {
        this(0);
    }

    /** @param lastIdBefore the last id before this start: the log's ids go on after it */
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
    public synchronized CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, PublishKey key,
                                                       Runnable afterCommit) {
        lastAppended = firstId + events.size() - 1;
        notifyAll();
        return COMMITTED;
    }

    /** Waits until the log has given {@code id} (its publish may still be delivering). */
    public synchronized void awaitGiven(long id, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (lastAppended < id) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("the log has given ids up to " + lastAppended + ", not " + id);
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

package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The centre of the broker: hands every event the {@link EventLog} gives it, in id order, to its topic's
 * broadcaster; registers subscribers and serves their replay.
 *
 * <p>One lock guards the topics and their subscribers. Offering each event to every subscriber queue under the
 * same lock, in the log's id order, is what makes the order the same for everyone: every subscriber sees events in
 * id order, across topics too, so a {@code Last-Event-ID} is an exact resume point. The work under the lock is
 * bounded and never blocks (copying a frame, non-blocking queue offers); writing to sockets happens elsewhere.
 * Registering a subscriber and snapshotting the replay windows under the same lock splits history exactly: what
 * was delivered before is replayed, what comes after is live, nothing is lost or sent twice.
 *
 * <p>The hub gives no ids and appends nothing: the log does, and calls {@link #deliver}, whichever backend it is.
 *
 * <p>At {@code topic.max-count}, a new topic takes the place of the least recently active topic that has no
 * subscriber and no admitted event still to deliver ({@link TopicTable}, {@link IdleTopics}), so that a flood of
 * invented event types cannot lock out a legitimate one: the junk gives way to it. What the evicted topic's replay
 * window held is forgotten as {@link #removeIdleTopics} forgets it, so a resume from before it is served by the log
 * or told of the gap, exactly as after a cut of the {@link WindowBudget}. Only subscribed topics, or a burst of new
 * ones faster than the log delivers, make the limit refuse.
 *
 * <p>On a cluster node the hub also decides what the node's feed reads of the stream, its {@link ReadScope}: only
 * the topics it holds, narrowed by the node ({@link #narrowReads}) and widened here as a subscriber to another topic
 * arrives, under the lock that registers it (docs/architecture.md says why the hub owns it).
 */
public final class Hub {
    private final ReentrantLock lock = new ReentrantLock();
    private final TopicTable topics;
    private final EventLog log;
    /** The last id delivered to subscribers. */
    private long lastDelivered;
    private boolean closed;
    /** Why publishes and subscriptions are refused for now, or {@code null}. */
    private String refusal;
    /**
     * What a cluster node's feed reads. Every topic the hub holds is covered: a narrower scope removes the others,
     * and a subscriber to a topic outside it widens it before the topic is made.
     */
    private ReadScope readScope = ReadScope.EVERY_TOPIC;
    /** The most topics a scope short of every topic names: a consumer of nats-server 2.9 filters on one subject. */
    private static final int MOST_TOPICS_READ_APART = 1;
    /**
     * Told, after the lock, that the feed should look at once: the scope has widened, or a resume waits for an id
     * the hub has not reached.
     */
    private volatile Runnable feedShouldLook = () -> { };
    /** The stream's last sequence as a cluster node's feed last learnt it; 0 on a single node. */
    private long streamReachedId;

    /**
     * A hub that delivers the log's events after its last id.
     *
     * @param windowEvents      the most events one topic's replay window holds
     * @param windowBytes       the most bytes of frames one topic's replay window holds
     * @param windowsTotalBytes the most heap all replay windows hold together ({@link WindowBudget})
     */
    public Hub(int maxTopics, int windowEvents, long windowBytes, long windowsTotalBytes, EventLog log) {
        this.log = log;
        this.lastDelivered = log.lastId();
        // What came before this start is not in memory: a resume from before it is served by the log.
        this.topics = new TopicTable(maxTopics, windowEvents, windowBytes, windowsTotalBytes, lastDelivered);
    }

    /**
     * Fails if this node takes no publish of the events now: it is shutting down or cut off, or they would create
     * more topics than {@code topic.max-count} and no idle topic can give way; else makes their topics and holds
     * them until the events are delivered, so that their delivery finds them however many topics subscribers or
     * other publishes create meanwhile. A log whose ids this node gives asks before it gives them, so that a
     * refused publish exists nowhere. Does not block.
     *
     * @param firstId the id the log will give the first event, the others following one apart
     * @throws UnavailableException if the events are refused
     */
    public void admit(long firstId, List<IncomingEvent> events) {
        long now = System.nanoTime();
        lock.lock();
        try {
            requireOpen();
            topics.makeRoomForEvents(events, lastDelivered);
            long id = firstId;
            for (IncomingEvent event : events) {
                TopicBroadcaster topic = topics.topicFor(event.topicKey(), now);
                topic.admitted(id++, now);
                topics.touched(topic);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Delivers events the log holds, with ids from {@code firstId} on, one apart, to their topics' subscribers. The
     * log calls this in id order; an event at or below the last id delivered is ignored (a cluster's feed may
     * hand one again after it restarts).
     *
     * @param publication collects the work the subscribers' offers leave for after the lock; the caller runs it
     *                    ({@link Publication#runDeferred}) once this returns
     */
    public void deliver(long firstId, List<IncomingEvent> events, Publication publication) {
        lock.lock();
        try {
            long now = System.nanoTime();
            long id = firstId;
            for (IncomingEvent event : events) {
                deliverIfNew(id++, event, now, publication);
            }
            topics.keepWindowsWithinBudget();
        } finally {
            lock.unlock();
        }
    }

    /**
     * As {@link #deliver(long, List, Publication)}, for a cluster node's feed that reads {@code scope}: ignored,
     * returning false, unless that scope covers the hub's. {@code ids[i]} is the id of {@code events.get(i)}
     * ({@code ids} may be longer: the feed reuses it), increasing; they may skip the events of topics the scope
     * leaves out. The events of topics the hub's scope leaves out pass by, no topic made for them.
     */
    public boolean deliver(ReadScope scope, long[] ids, List<IncomingEvent> events, Publication publication) {
        lock.lock();
        try {
            if (!scope.covers(readScope)) {
                return false;
            }
            long now = System.nanoTime();
            for (int i = 0; i < events.size(); i++) {
                deliverIfNew(ids[i], events.get(i), now, publication);
            }
            topics.keepWindowsWithinBudget();
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void deliverIfNew(long id, IncomingEvent event, long now, Publication publication) {
        if (id > lastDelivered) {
            if (readScope.covers(event.topicKey())) {
                deliverOne(id, event, now, publication);
            }
            lastDelivered = id;
        }
    }

    /**
     * Moves the last id delivered to {@code id}, for a feed reading {@code scope} that knows the stream holds no
     * event of its topics up to it that it has not delivered: a resume from there need not wait.
     */
    public void skipTo(ReadScope scope, long id) {
        lock.lock();
        try {
            if (scope.covers(readScope) && id > lastDelivered) {
                lastDelivered = id;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Tells the hub the stream's last sequence, as a cluster node's feed learnt it. */
    public void streamReached(long id) {
        lock.lock();
        try {
            streamReachedId = Math.max(streamReachedId, id);
        } finally {
            lock.unlock();
        }
    }

    /** What a cluster node's feed should read now. */
    public ReadScope readScope() {
        lock.lock();
        try {
            return readScope;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code look} (after the hub's lock) whenever a new subscriber widens the {@link #readScope}, or a resume
     * is told to try again while the scope leaves topics out: the feed of a narrower scope learns only from time
     * to time that the stream holds nothing more for it ({@link #skipTo}).
     */
    public void whenFeedShouldLook(Runnable look) {
        this.feedShouldLook = look;
    }

    /**
     * The topics that have subscribers now, if they are few enough to be read apart (one on nats-server 2.9);
     * {@code null} if they are more. Cheap when they are more: idle topics are counted apart.
     */
    public Set<String> subscribedTopicsIfFew() {
        lock.lock();
        try {
            return topics.subscribedIfAtMost(MOST_TOPICS_READ_APART);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reads only {@code topicKeys} from now on, unless a topic outside them has a subscriber: removes every other
     * topic with its replay window (a resume from before is served by the log). The feed of the wider scope goes on
     * delivering what the new one covers until a feed of the new scope replaces it.
     *
     * @return the new scope, or {@code null} if a subscriber wants a topic outside it
     */
    public ReadScope narrowReads(Set<String> topicKeys) {
        lock.lock();
        try {
            if (topics.subscribedOutside(topicKeys)) {
                return null;
            }
            topics.keepOnly(topicKeys);
            topics.forgetUpTo(lastDelivered);
            readScope = new ReadScope(topicKeys);
            return readScope;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Called under the lock before topics are made for a subscriber: a topic the feed has not been reading has
     * missed events, so its window starts at the last id delivered, and the feed reads it too from there (every
     * topic, once they are more than one subject can name). Only a feed of the new scope is taken from then on.
     */
    private boolean widenReadsFor(Set<String> topicKeys) {
        for (String key : topicKeys) {
            if (!readScope.covers(key)) {
                topics.forgetUpTo(lastDelivered);
                readScope = readScope.with(topicKeys, MOST_TOPICS_READ_APART);
                return true;
            }
        }
        return false;
    }

    private void deliverOne(long id, IncomingEvent event, long now, Publication publication) {
        if (!topics.hasRoomFor(event.topicKey())) {
            // Only another node's event comes here without a topic (this node's publishes made theirs when they were
            // admitted): a new topic has no subscriber to deliver to, and past topic.max-count it is not made, or
            // another node's publisher could grow this node's heap one event type at a time. A later resume reads the
            // event from the log.
            topics.forgetUpTo(id);
            return;
        }
        TopicBroadcaster topic = topics.topicFor(event.topicKey(), now);
        topic.broadcast(PublishedEvent.encode(id, event, topic), now, publication);
        topics.touched(topic);
    }

    /**
     * Refuses publishes and new subscriptions with {@code why} from now on, or, with {@code null}, takes them
     * again (cluster mode: while the node is cut off from the stream).
     */
    public void refuseFor(String why) {
        lock.lock();
        try {
            refusal = why;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Registers a subscriber to the topics and takes its replay in the same step.
     *
     * @param afterId the last id the subscriber has seen; empty for live events only
     */
    public Replay subscribe(Set<String> topicKeys, Subscriber subscriber, OptionalLong afterId) {
        long now = System.nanoTime();
        boolean feedShouldLookNow = false;
        long hasUpTo = 0;
        lock.lock();
        try {
            requireOpen();
            if (afterId.isPresent() && afterId.getAsLong() > lastDelivered && log.mayStillDeliver(afterId.getAsLong())) {
                if (readScope.readsEveryTopic() || afterId.getAsLong() > streamReachedId) {
                    feedShouldLookNow = !readScope.readsEveryTopic();
                    // Another node delivered it already, or it is being committed; this node will deliver it in a
                    // moment. Served now, the events between would reach the subscriber twice.
                    throw new UnavailableException("this node has not yet received event " + afterId.getAsLong()
                            + "; try again in a moment");
                }
                // A narrower feed learns only from time to time that the stream holds nothing more for it, so its
                // last id may lag the stream for good: the subscriber has every event of its topics up to its
                // resume point, which the stream holds, and takes only what comes after it.
                hasUpTo = afterId.getAsLong();
            }
            topics.makeRoomFor(topicKeys, lastDelivered);
            feedShouldLookNow = widenReadsFor(topicKeys);
            if (feedShouldLookNow && afterId.isEmpty() && streamReachedId > lastDelivered) {
                // The feed reads the new topic from the last id delivered, which a narrower feed may have left behind
                // the stream: what the stream held at its last look was published before this subscriber came, and
                // is not news to it.
                hasUpTo = streamReachedId;
            }
            if (hasUpTo > 0) {
                // Told before it is registered: a subscriber that cannot take it is not left in its topics.
                subscriber.hasUpTo(hasUpTo);
            }
            List<TopicBroadcaster> subscribed = new ArrayList<>(topicKeys.size());
            for (String key : topicKeys) {
                TopicBroadcaster topic = topics.topicFor(key, now);
                topic.add(subscriber, now);
                topics.subscribed(topic);
                subscribed.add(topic);
            }
            if (hasUpTo > 0) {
                return Replay.live(Math.max(lastDelivered, hasUpTo));
            }
            return afterId.isPresent() ? replay(subscribed, subscriber.filter(), afterId.getAsLong())
                    : Replay.live(lastDelivered);
        } finally {
            lock.unlock();
            if (feedShouldLookNow) {
                feedShouldLook.run();
            }
        }
    }

    private Replay replay(List<TopicBroadcaster> subscribed, SubscriberFilter filter, long afterId) {
        long startsAfter = 0;
        for (TopicBroadcaster topic : subscribed) {
            startsAfter = Math.max(startsAfter, topic.window().startsAfter());
        }
        // A resume point beyond our sequence comes from before a restart that lost the sequence: all we
        // hold is new to that subscriber.
        boolean sequenceReset = afterId > lastDelivered;
        // Older than the windows: the log serves (afterId, startsAfter], the windows what follows.
        boolean fromJournal = !sequenceReset && startsAfter > afterId && log.replays();
        long from = sequenceReset ? 0 : fromJournal ? startsAfter : afterId;
        List<PublishedEvent> events = new ArrayList<>();
        for (TopicBroadcaster topic : subscribed) {
            topic.window().collectAfter(from, filter, events);
        }
        if (subscribed.size() > 1) {
            events.sort(Comparator.comparingLong(PublishedEvent::id));
        }
        if (fromJournal) {
            return new Replay(events, null, lastDelivered, afterId, startsAfter);
        }
        ReplayGap gap = sequenceReset || startsAfter > afterId ? new ReplayGap(afterId, startsAfter) : null;
        return new Replay(events, gap, lastDelivered, 0, 0);
    }

    /** Removes a subscriber from its topics; safe to call more than once. */
    public void unsubscribe(Set<String> topicKeys, Subscriber subscriber) {
        long now = System.nanoTime();
        lock.lock();
        try {
            for (String key : topicKeys) {
                TopicBroadcaster topic = topics.find(key);
                if (topic != null) {
                    topic.remove(subscriber, now);
                    topics.unsubscribed(topic);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes topics with no subscribers and no publish for {@code idleFor}, with their replay windows: the oldest
     * of the idle topics, so it looks at no other topic.
     */
    public int removeIdleTopics(Duration idleFor) {
        long cutoff = System.nanoTime() - idleFor.toNanos();
        lock.lock();
        try {
            return topics.removeIdleSince(cutoff, lastDelivered);
        } finally {
            lock.unlock();
        }
    }

    /** {@code topic.max-count}. */
    public int maxTopics() {
        return topics.maxTopics();
    }

    /** How many topics gave way to new ones at {@code topic.max-count} since the start. */
    public long evictions() {
        lock.lock();
        try {
            return topics.evictions();
        } finally {
            lock.unlock();
        }
    }

    /** Refuses every publish and subscription from now on. */
    public void close() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    /** The id of the last event delivered to subscribers. */
    public long lastId() {
        lock.lock();
        try {
            return lastDelivered;
        } finally {
            lock.unlock();
        }
    }

    /**
     * What the replay windows hold together.
     *
     * @param heapBytes the heap they are charged, bounded by {@code replay.total-max-bytes}
     * @param trims     how many times they were cut to fit that bound since the start
     */
    public record WindowUse(long heapBytes, long trims) {
    }

    public WindowUse windowUse() {
        lock.lock();
        try {
            return new WindowUse(topics.windowBytes(), topics.windowTrims());
        } finally {
            lock.unlock();
        }
    }

    /** A snapshot of every topic's counters, sorted by event type. */
    public List<TopicStats> stats() {
        Collection<TopicBroadcaster> snapshot;
        lock.lock();
        try {
            snapshot = topics.snapshot();
        } finally {
            lock.unlock();
        }
        return snapshot.stream().map(TopicBroadcaster::stats)
                .sorted(Comparator.comparing(TopicStats::eventType)).toList();
    }

    private void requireOpen() {
        if (closed) {
            throw new UnavailableException("the Event Handler is shutting down");
        }
        if (refusal != null) {
            throw new UnavailableException(refusal);
        }
    }
}

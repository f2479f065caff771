package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;

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
 */
public final class Hub {
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, TopicBroadcaster> topics = new HashMap<>();
    private final int maxTopics;
    private final int windowEvents;
    private final long windowBytes;
    private final WindowBudget windowBudget;
    private final EventLog log;
    /** The last id delivered to subscribers. */
    private long lastDelivered;
    /** Events of removed topics with ids up to this were forgotten; a new topic's window starts after it. */
    private long forgottenUpTo;
    private boolean closed;
    /** Why publishes and subscriptions are refused for now, or {@code null}. */
    private String refusal;

    /**
     * A hub that delivers the log's events after its last id.
     *
     * @param windowEvents      the most events one topic's replay window holds
     * @param windowBytes       the most bytes of frames one topic's replay window holds
     * @param windowsTotalBytes the most heap all replay windows hold together ({@link WindowBudget})
     */
    public Hub(int maxTopics, int windowEvents, long windowBytes, long windowsTotalBytes, EventLog log) {
        this.maxTopics = maxTopics;
        this.windowEvents = windowEvents;
        this.windowBytes = windowBytes;
        this.windowBudget = new WindowBudget(windowsTotalBytes);
        this.log = log;
        this.lastDelivered = log.lastId();
        // What came before this start is not in memory: a resume from before it is served by the log.
        this.forgottenUpTo = lastDelivered;
    }

    /**
     * Fails if this node takes no publish of the events now: it is shutting down or cut off, or they would create
     * more than {@code topic.max-count} topics; else makes their topics, so that their delivery finds them however
     * many topics subscribers or other publishes create meanwhile. A log whose ids this node gives asks before it
     * gives them, so that a refused publish exists nowhere. Does not block.
     *
     * @throws UnavailableException if the events are refused
     */
    public void admit(List<IncomingEvent> events) {
        long now = System.nanoTime();
        lock.lock();
        try {
            requireOpen();
            if (topics.size() + events.size() > maxTopics) {
                requireRoomFor(events.stream().map(IncomingEvent::topicKey).collect(Collectors.toSet()));
            }
            for (IncomingEvent event : events) {
                topicFor(event.topicKey(), now);
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
        long now = System.nanoTime();
        lock.lock();
        try {
            long id = firstId;
            for (IncomingEvent event : events) {
                if (id > lastDelivered) {
                    deliverOne(id, event, now, publication);
                    lastDelivered = id;
                }
                id++;
            }
            keepWindowsWithinBudget();
        } finally {
            lock.unlock();
        }
    }

    private void deliverOne(long id, IncomingEvent event, long now, Publication publication) {
        if (topics.size() >= maxTopics && !topics.containsKey(event.topicKey())) {
            // Only another node's event comes here without a topic (this node's publishes made theirs when they were
            // admitted): a new topic has no subscriber to deliver to, and past topic.max-count it is not made, or
            // another node's publisher could grow this node's heap one event type at a time. A later resume reads the
            // event from the log.
            forgottenUpTo = id;
            return;
        }
        TopicBroadcaster topic = topicFor(event.topicKey(), now);
        topic.broadcast(PublishedEvent.encode(id, event, topic), now, publication);
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

    private void keepWindowsWithinBudget() {
        if (windowBudget.over()) {
            windowBudget.trim(topics.values());
        }
    }

    /**
     * Registers a subscriber to the topics and takes its replay in the same step.
     *
     * @param afterId the last id the subscriber has seen; empty for live events only
     */
    public Replay subscribe(Set<String> topicKeys, Subscriber subscriber, OptionalLong afterId) {
        long now = System.nanoTime();
        lock.lock();
        try {
            requireOpen();
            if (afterId.isPresent() && afterId.getAsLong() > lastDelivered && log.mayStillDeliver(afterId.getAsLong())) {
                // Another node delivered it already, or it is being committed; this node will deliver it in a moment.
                // Served now, the events between would reach the subscriber twice.
                throw new UnavailableException("this node has not yet received event " + afterId.getAsLong()
                        + "; try again in a moment");
            }
            requireRoomFor(topicKeys);
            List<TopicBroadcaster> subscribed = new ArrayList<>(topicKeys.size());
            for (String key : topicKeys) {
                TopicBroadcaster topic = topicFor(key, now);
                topic.add(subscriber, now);
                subscribed.add(topic);
            }
            return afterId.isPresent() ? replay(subscribed, subscriber.filter(), afterId.getAsLong())
                    : Replay.live(lastDelivered);
        } finally {
            lock.unlock();
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
                TopicBroadcaster topic = topics.get(key);
                if (topic != null) {
                    topic.remove(subscriber, now);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Removes topics with no subscribers and no publish for {@code idle}, with their replay windows. */
    public int removeIdleTopics(Duration idle) {
        long cutoff = System.nanoTime() - idle.toNanos();
        lock.lock();
        try {
            int before = topics.size();
            topics.values().removeIf(topic -> {
                if (!topic.idleSince(cutoff)) {
                    return false;
                }
                forgottenUpTo = Math.max(forgottenUpTo, topic.lastId());
                topic.window().discard();
                return true;
            });
            return before - topics.size();
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
            return new WindowUse(windowBudget.bytes(), windowBudget.trims());
        } finally {
            lock.unlock();
        }
    }

    /** A snapshot of every topic's counters, sorted by event type. */
    public List<TopicStats> stats() {
        List<TopicBroadcaster> snapshot;
        lock.lock();
        try {
            snapshot = new ArrayList<>(topics.values());
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

    private void requireRoomFor(Set<String> keys) {
        long missing = keys.stream().filter(key -> !topics.containsKey(key)).count();
        if (missing > 0 && topics.size() + missing > maxTopics) {
            throw new UnavailableException("the Event Handler already holds its maximum of " + maxTopics
                    + " topics (topic.max-count)");
        }
    }

    private TopicBroadcaster topicFor(String key, long now) {
        TopicBroadcaster topic = topics.get(key);
        if (topic == null) {
            topic = new TopicBroadcaster(key,
                    new ReplayWindow(windowEvents, windowBytes, windowBudget, forgottenUpTo), now);
            topics.put(key, topic);
        }
        return topic;
    }
}

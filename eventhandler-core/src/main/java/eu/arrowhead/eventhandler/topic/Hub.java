package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.TopicStats;
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
 * The centre of the broker: gives every event its id in one global sequence and hands it to its topic's
 * broadcaster; registers subscribers and serves their replay.
 *
 * <p>One lock guards the sequence, the topics and their subscribers. Taking the id and offering the event
 * to every subscriber queue under the same lock is what makes the order the same for everyone: every
 * subscriber sees events in id order, across topics too, so a {@code Last-Event-ID} is an exact resume
 * point. The work under the lock is bounded and never blocks (copying a frame, non-blocking queue
 * offers); writing to sockets happens elsewhere. Registering a subscriber and snapshotting the replay
 * windows under the same lock splits history exactly: what was published before is replayed, what comes
 * after is live, nothing is lost or sent twice.
 */
public final class Hub {
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, TopicBroadcaster> topics = new HashMap<>();
    private final int maxTopics;
    private final int windowEvents;
    private final long windowBytes;
    private long lastId;
    /** Events of removed topics with ids up to this were forgotten; a new topic's window starts after it. */
    private long forgottenUpTo;
    private boolean closed;

    public Hub(int maxTopics, int windowEvents, long windowBytes, long lastId) {
        this.maxTopics = maxTopics;
        this.windowEvents = windowEvents;
        this.windowBytes = windowBytes;
        this.lastId = lastId;
        this.forgottenUpTo = lastId;
    }

    /**
     * Publishes the events, all or none, with consecutive ids.
     *
     * @return the id of the first event
     * @throws HubUnavailableException if the hub is closed or the events would create too many topics
     */
    public long publish(List<IncomingEvent> events) {
        long now = System.nanoTime();
        lock.lock();
        try {
            if (closed) {
                throw new HubUnavailableException("the Event Handler is shutting down");
            }
            if (topics.size() + events.size() > maxTopics) {
                requireRoomFor(events.stream().map(IncomingEvent::topicKey).collect(Collectors.toSet()));
            }
            long first = lastId + 1;
            for (IncomingEvent event : events) {
                TopicBroadcaster topic = topicFor(event.topicKey(), now);
                topic.broadcast(PublishedEvent.encode(++lastId, event, topic), now);
            }
            return first;
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
        lock.lock();
        try {
            if (closed) {
                throw new HubUnavailableException("the Event Handler is shutting down");
            }
            requireRoomFor(topicKeys);
            List<TopicBroadcaster> subscribed = new ArrayList<>(topicKeys.size());
            for (String key : topicKeys) {
                TopicBroadcaster topic = topicFor(key, now);
                topic.add(subscriber, now);
                subscribed.add(topic);
            }
            return afterId.isPresent() ? replay(subscribed, subscriber.filter(), afterId.getAsLong())
                    : new Replay(List.of(), null, lastId);
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
        boolean sequenceReset = afterId > lastId;
        long from = sequenceReset ? 0 : afterId;
        List<PublishedEvent> events = new ArrayList<>();
        for (TopicBroadcaster topic : subscribed) {
            topic.window().collectAfter(from, filter, events);
        }
        if (subscribed.size() > 1) {
            events.sort(Comparator.comparingLong(PublishedEvent::id));
        }
        ReplayGap gap = sequenceReset || startsAfter > afterId ? new ReplayGap(afterId, startsAfter) : null;
        return new Replay(events, gap, lastId);
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

    /** The id of the last published event. */
    public long lastId() {
        lock.lock();
        try {
            return lastId;
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

    private void requireRoomFor(Set<String> keys) {
        long missing = keys.stream().filter(key -> !topics.containsKey(key)).count();
        if (missing > 0 && topics.size() + missing > maxTopics) {
            throw new HubUnavailableException("the Event Handler already holds its maximum of " + maxTopics
                    + " topics (topic.max-count)");
        }
    }

    private TopicBroadcaster topicFor(String key, long now) {
        TopicBroadcaster topic = topics.get(key);
        if (topic == null) {
            topic = new TopicBroadcaster(key, new ReplayWindow(windowEvents, windowBytes, forgottenUpTo), now);
            topics.put(key, topic);
        }
        return topic;
    }
}

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
import java.util.concurrent.CompletableFuture;
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
 *
 * <p>Every event is also appended to the {@link EventJournal} under the lock, so the event store sees the
 * same order. With a durable journal ({@code store.mode=sync}) events are delivered only once committed:
 * ids are given at publish, delivery happens in {@link #deliverCommitted}, still in id order.
 */
public final class Hub {
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, TopicBroadcaster> topics = new HashMap<>();
    private final int maxTopics;
    private final int windowEvents;
    private final long windowBytes;
    private final WindowBudget windowBudget;
    private final EventJournal journal;
    /** The last id given out. */
    private long lastId;
    /** The last id delivered to subscribers; below {@link #lastId} while a durable journal commits. */
    private long lastDelivered;
    /** Events of removed topics with ids up to this were forgotten; a new topic's window starts after it. */
    private long forgottenUpTo;
    private boolean closed;
    /** Why publishes and subscriptions are refused for now, or {@code null}. */
    private String refusal;

    /**
     * A hub whose sequence continues after the journal's last id.
     *
     * @param windowEvents      the most events one topic's replay window holds
     * @param windowBytes       the most bytes of frames one topic's replay window holds
     * @param windowsTotalBytes the most heap all replay windows hold together ({@link WindowBudget})
     */
    public Hub(int maxTopics, int windowEvents, long windowBytes, long windowsTotalBytes, EventJournal journal) {
        this.maxTopics = maxTopics;
        this.windowEvents = windowEvents;
        this.windowBytes = windowBytes;
        this.windowBudget = new WindowBudget(windowsTotalBytes);
        this.journal = journal;
        this.lastId = journal.lastId();
        this.lastDelivered = lastId;
        // What came before this start is not in memory: a resume from before it is served by the journal.
        this.forgottenUpTo = lastId;
    }

    /**
     * Publishes the events, all or none, with consecutive ids.
     *
     * @param publication collects what the subscribers' offers leave for after the lock; the caller runs it
     *                    ({@link Publication#runDeferred}) once this returns or throws
     * @return the first id, and when the events are committed to the journal (at once unless it is durable)
     * @throws UnavailableException if the hub is closed, the events would create too many topics, or the
     *                                 journal cannot take them now
     */
    public Accepted publish(List<IncomingEvent> events, Publication publication) {
        long now = System.nanoTime();
        lock.lock();
        try {
            if (closed) {
                throw new UnavailableException("the Event Handler is shutting down");
            }
            if (refusal != null) {
                throw new UnavailableException(refusal);
            }
            if (topics.size() + events.size() > maxTopics) {
                requireRoomFor(events.stream().map(IncomingEvent::topicKey).collect(Collectors.toSet()));
            }
            long first = lastId + 1;
            // The journal first: when it refuses the events (its writer is behind), they take no ids and
            // reach nobody, so a 503 means the event does not exist.
            if (journal.durable()) {
                CompletableFuture<Void> committed = journal.append(first, events,
                        () -> deliverCommitted(first, events));
                lastId += events.size();
                return new Accepted(first, committed);
            }
            journal.append(first, events, null);
            for (IncomingEvent event : events) {
                TopicBroadcaster topic = topicFor(event.topicKey(), now);
                topic.broadcast(PublishedEvent.encode(++lastId, event, topic), now, publication);
            }
            lastDelivered = lastId;
            keepWindowsWithinBudget();
            return new Accepted(first, EventJournal.COMMITTED);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Delivers events a durable journal has committed; it calls this in id order, on its own thread and
     * not within a publish.
     */
    private void deliverCommitted(long firstId, List<IncomingEvent> events) {
        long now = System.nanoTime();
        lock.lock();
        try {
            long id = firstId;
            for (IncomingEvent event : events) {
                TopicBroadcaster topic = topicFor(event.topicKey(), now);
                topic.broadcast(PublishedEvent.encode(id, event, topic), now, Publication.NONE);
                lastDelivered = id++;
            }
            keepWindowsWithinBudget();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Delivers an event whose id a log that {@linkplain EventJournal#givesIds gives the ids} gave it (cluster
     * mode: the stream's sequence). The log's reader calls this in id order; an id at or below the last one
     * delivered is ignored.
     *
     * @param publication collects the writes the subscribers' offers leave; the caller runs them after this returns
     */
    public void deliverLogged(long id, IncomingEvent event, Publication publication) {
        long now = System.nanoTime();
        lock.lock();
        try {
            if (id <= lastDelivered) {
                return;
            }
            if (topics.size() >= maxTopics && !topics.containsKey(event.topicKey())) {
                // A new topic has no subscriber to deliver to, and past topic.max-count it is not made: any node's
                // publisher could otherwise grow every node's heap one event type at a time. A later resume
                // reads the event from the log.
                forgottenUpTo = id;
            } else {
                TopicBroadcaster topic = topicFor(event.topicKey(), now);
                topic.broadcast(PublishedEvent.encode(id, event, topic), now, publication);
            }
            lastId = id;
            lastDelivered = id;
            keepWindowsWithinBudget();
        } finally {
            lock.unlock();
        }
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
     * An accepted publish.
     *
     * @param firstId   the id of the first event
     * @param committed completes once the events are in the journal, if it is durable; else complete
     */
    public record Accepted(long firstId, CompletableFuture<Void> committed) {
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
                throw new UnavailableException("the Event Handler is shutting down");
            }
            if (refusal != null) {
                throw new UnavailableException(refusal);
            }
            if (journal.givesIds() && afterId.isPresent() && afterId.getAsLong() > lastDelivered) {
                // Another node delivered it already; this one will in a moment. Served now, the events between
                // would reach the subscriber twice.
                throw new UnavailableException("this node has not yet received event " + afterId.getAsLong()
                        + " from the cluster's stream; try again in a moment");
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
        boolean sequenceReset = afterId > lastId;
        // Older than the windows: the journal serves (afterId, startsAfter], the windows what follows.
        boolean fromJournal = !sequenceReset && startsAfter > afterId && journal.replays();
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

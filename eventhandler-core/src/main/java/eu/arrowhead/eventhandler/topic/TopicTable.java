package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The hub's topics by event type, held within {@code topic.max-count}: makes a topic with its replay window when
 * first needed, and removes it again when it is idle too long, gives way to a new one (the least recently active
 * topic without a subscriber, {@link IdleTopics}) or falls outside what a cluster node reads ({@link #keepOnly}).
 * Every replay window is charged to one {@link WindowBudget}.
 *
 * <p>Events a new topic's window may lack are forgotten: those of removed topics, and those the hub passed by (past
 * {@code topic.max-count}, or outside its read scope). A new topic's window starts after the highest id forgotten, and
 * a resume from before that is served by the log or told of the gap. Not thread-safe: the hub's lock guards it.
 */
final class TopicTable {
    private final Map<String, TopicBroadcaster> topics = new HashMap<>();
    private final IdleTopics idle = new IdleTopics();
    private final int maxTopics;
    private final int windowEvents;
    private final long windowBytes;
    private final WindowBudget windowBudget;
    /** Events with ids up to this may be missing from a new topic's window; it starts after them. */
    private long forgottenUpTo;
    /** Topics that gave way to new ones at {@code topic.max-count}. */
    private long evictions;

    /**
     * @param forgottenUpTo the last id before this start: what came before is not in memory
     */
    TopicTable(int maxTopics, int windowEvents, long windowBytes, long windowsTotalBytes, long forgottenUpTo) {
        this.maxTopics = maxTopics;
        this.windowEvents = windowEvents;
        this.windowBytes = windowBytes;
        this.windowBudget = new WindowBudget(windowsTotalBytes);
        this.forgottenUpTo = forgottenUpTo;
    }

    /** The topic of {@code key}, made (idle, its window starting after what is forgotten) if there is none. */
    TopicBroadcaster topicFor(String key, long now) {
        TopicBroadcaster topic = topics.get(key);
        if (topic == null) {
            topic = new TopicBroadcaster(key,
                    new ReplayWindow(windowEvents, windowBytes, windowBudget, forgottenUpTo), now);
            topics.put(key, topic);
            idle.add(topic);
        }
        return topic;
    }

    /** The topic of {@code key}, or {@code null}. */
    TopicBroadcaster find(String key) {
        return topics.get(key);
    }

    /** Whether a topic for {@code key} can be made without another giving way. */
    boolean hasRoomFor(String key) {
        return topics.size() < maxTopics || topics.containsKey(key);
    }

    /** Moves an idle topic that was just active to the newest end of the idle ones. */
    void touched(TopicBroadcaster topic) {
        idle.touch(topic);
    }

    /** A topic that got a subscriber: no longer idle. */
    void subscribed(TopicBroadcaster topic) {
        idle.remove(topic);
    }

    /** A topic that lost a subscriber: idle if it was the last. */
    void unsubscribed(TopicBroadcaster topic) {
        if (!topic.hasSubscribers() && !topic.idle) {
            idle.add(topic);
        }
    }

    /** Marks the events up to {@code id} as missing from any topic made from now on. */
    void forgetUpTo(long id) {
        forgottenUpTo = Math.max(forgottenUpTo, id);
    }

    /**
     * Makes room for the topics of {@code keys} that do not exist yet, evicting the least recently active idle
     * topics that are not among them, or fails, evicting none, if there are not enough.
     *
     * @param lastDelivered the hub's last delivered id: a topic with an admitted event after it does not give way
     * @throws UnavailableException if the topics do not fit
     */
    void makeRoomFor(Set<String> keys, long lastDelivered) {
        int missing = 0;
        int idleRequested = 0;
        for (String key : keys) {
            TopicBroadcaster topic = topics.get(key);
            if (topic == null) {
                missing++;
            } else if (topic.idle) {
                idleRequested++;
            }
        }
        int toEvict = topics.size() + missing - maxTopics;
        if (toEvict <= 0) {
            return;
        }
        if (idle.size() - idleRequested < toEvict) {
            throw full();
        }
        // The requested topics go to the newest end, so the oldest idle topics are all others.
        for (String key : keys) {
            TopicBroadcaster topic = topics.get(key);
            if (topic != null) {
                idle.touch(topic);
            }
        }
        TopicBroadcaster candidate = idle.oldest();
        for (int i = 0; i < toEvict; i++, candidate = candidate.newer) {
            if (candidate.awaitsDelivery(lastDelivered)) {
                // An event of it is admitted and not yet delivered: the log is behind. Refused before any gives way.
                throw full();
            }
        }
        for (int i = 0; i < toEvict; i++) {
            remove(idle.oldest());
            evictions++;
        }
    }

    /** As {@link #makeRoomFor(Set, long)} for the topics of {@code events}, if they may not fit. */
    void makeRoomForEvents(List<IncomingEvent> events, long lastDelivered) {
        // Counted as if every event made a topic: the set of their keys is built only when that may not fit.
        if (topics.size() + events.size() > maxTopics) {
            makeRoomFor(events.stream().map(IncomingEvent::topicKey).collect(Collectors.toSet()), lastDelivered);
        }
    }

    /**
     * Removes the topics idle since before {@code cutoffNanos} with no admitted event after {@code lastDelivered}:
     * the oldest of the idle topics, so it looks at no other topic.
     */
    int removeIdleSince(long cutoffNanos, long lastDelivered) {
        int removed = 0;
        TopicBroadcaster oldest = idle.oldest();
        while (oldest != null && oldest.idleSince(cutoffNanos) && !oldest.awaitsDelivery(lastDelivered)) {
            remove(oldest);
            removed++;
            oldest = idle.oldest();
        }
        return removed;
    }

    /** Whether a topic outside {@code keys} has a subscriber. */
    boolean subscribedOutside(Set<String> keys) {
        for (TopicBroadcaster topic : topics.values()) {
            if (topic.hasSubscribers() && !keys.contains(topic.key())) {
                return true;
            }
        }
        return false;
    }

    /** Removes every topic outside {@code keys}, with its replay window. */
    void keepOnly(Set<String> keys) {
        for (TopicBroadcaster topic : new ArrayList<>(topics.values())) {
            if (!keys.contains(topic.key())) {
                remove(topic);
            }
        }
    }

    /**
     * The topics that have subscribers, if they are at most {@code most}; {@code null} if they are more. Cheap when
     * they are more: idle topics are counted apart.
     */
    Set<String> subscribedIfAtMost(int most) {
        if (topics.size() - idle.size() > most) {
            return null;
        }
        return topics.values().stream().filter(TopicBroadcaster::hasSubscribers).map(TopicBroadcaster::key)
                .collect(Collectors.toUnmodifiableSet());
    }

    /** Cuts the replay windows to their budget if they are over it. */
    void keepWindowsWithinBudget() {
        if (windowBudget.over()) {
            windowBudget.trim(topics.values());
        }
    }

    private void remove(TopicBroadcaster topic) {
        idle.remove(topic);
        topics.remove(topic.key());
        forgetUpTo(topic.lastId());
        topic.window().discard();
    }

    private UnavailableException full() {
        return new UnavailableException("the Event Handler already holds its maximum of " + maxTopics
                + " topics (topic.max-count), each with a subscriber or an event being delivered");
    }

    /** {@code topic.max-count}. */
    int maxTopics() {
        return maxTopics;
    }

    /** How many topics gave way to new ones at {@code topic.max-count} since the start. */
    long evictions() {
        return evictions;
    }

    /** The heap the replay windows are charged together. */
    long windowBytes() {
        return windowBudget.bytes();
    }

    /** How many times the replay windows were cut to fit their budget since the start. */
    long windowTrims() {
        return windowBudget.trims();
    }

    /** The topics now, in no order. */
    Collection<TopicBroadcaster> snapshot() {
        return new ArrayList<>(topics.values());
    }
}

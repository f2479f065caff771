package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.TopicStats;
import java.util.ArrayList;
import java.util.List;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One topic: its subscribers, its replay window and its counters. It hands each event to the matching
 * subscribers' own queues and returns; it never writes to a socket, so a slow subscriber cannot hold it up.
 * Subscribers and window are guarded by the hub's lock; the counters are read without it.
 *
 * <p>Every topic costs heap whether anyone uses it or not, and {@code topic.max-count} of them must fit in
 * their share ({@code config/TopicLimit}): so the counters are plain fields, not {@code LongAdder}s (32 bytes
 * each, and over 250 once writer threads contend on one), and an empty window starts small.
 */
final class TopicBroadcaster {
    private static final VarHandle DELIVERED;
    private static final VarHandle DROPPED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            DELIVERED = lookup.findVarHandle(TopicBroadcaster.class, "delivered", long.class);
            DROPPED = lookup.findVarHandle(TopicBroadcaster.class, "dropped", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String key;
    private final List<Subscriber> subscribers = new ArrayList<>();
    private final ReplayWindow window;
    /** Written under the hub's lock only. */
    private volatile long published;
    /** Counted by the writer threads, through {@link #DELIVERED} and {@link #DROPPED}. */
    private volatile long delivered;
    private volatile long dropped;
    private volatile int subscriberCount;
    private long lastActivityNanos;
    private long lastId;
    /** The last id given to an event of this topic that the hub has not delivered yet: it holds the topic. */
    private long pinnedUpTo;
    /** Whether the topic is in its {@link TopicTable}'s {@link IdleTopics}, and its neighbours there. */
    boolean idle;
    TopicBroadcaster older;
    TopicBroadcaster newer;

    TopicBroadcaster(String key, ReplayWindow window, long nowNanos) {
        this.key = key;
        this.window = window;
        this.lastActivityNanos = nowNanos;
    }

    String key() {
        return key;
    }

    ReplayWindow window() {
        return window;
    }

    void broadcast(PublishedEvent event, long nowNanos, Publication publication) {
        window.add(event);
        published = published + 1;
        lastActivityNanos = nowNanos;
        lastId = event.id();
        for (int i = 0, n = subscribers.size(); i < n; i++) {
            Subscriber subscriber = subscribers.get(i);
            if (subscriber.filter().matches(event)) {
                subscriber.offer(event, publication);
            }
        }
    }

    void add(Subscriber subscriber, long nowNanos) {
        subscribers.add(subscriber);
        subscriberCount = subscribers.size();
        lastActivityNanos = nowNanos;
    }

    void remove(Subscriber subscriber, long nowNanos) {
        if (subscribers.remove(subscriber)) {
            subscriberCount = subscribers.size();
            lastActivityNanos = nowNanos;
        }
    }

    boolean idleSince(long cutoffNanos) {
        return subscribers.isEmpty() && lastActivityNanos - cutoffNanos < 0;
    }

    boolean hasSubscribers() {
        return !subscribers.isEmpty();
    }

    /** A publish of an event of this topic was admitted and will be delivered with this id. */
    void admitted(long id, long nowNanos) {
        pinnedUpTo = Math.max(pinnedUpTo, id);
        lastActivityNanos = nowNanos;
    }

    /** Whether an admitted event of this topic is still to be delivered after {@code lastDelivered}. */
    boolean awaitsDelivery(long lastDelivered) {
        return pinnedUpTo > lastDelivered;
    }

    long lastId() {
        return lastId;
    }

    void countDelivered() {
        DELIVERED.getAndAdd(this, 1L);
    }

    void countDropped() {
        DROPPED.getAndAdd(this, 1L);
    }

    TopicStats stats() {
        return new TopicStats(key, subscriberCount, published, delivered, dropped);
    }
}

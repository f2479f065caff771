package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.TopicStats;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * One topic: its subscribers, its replay window and its counters. It hands each event to the matching
 * subscribers' own queues and returns; it never writes to a socket, so a slow subscriber cannot hold it up.
 * Subscribers and window are guarded by the hub's lock; the counters are read without it.
 */
final class TopicBroadcaster {
    private final String key;
    private final List<Subscriber> subscribers = new ArrayList<>();
    private final ReplayWindow window;
    private final LongAdder published = new LongAdder();
    private final LongAdder delivered = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private volatile int subscriberCount;
    private long lastActivityNanos;
    private long lastId;

    TopicBroadcaster(String key, ReplayWindow window, long nowNanos) {
        this.key = key;
        this.window = window;
        this.lastActivityNanos = nowNanos;
    }

    ReplayWindow window() {
        return window;
    }

    void broadcast(PublishedEvent event, long nowNanos, Publication publication) {
        window.add(event);
        published.increment();
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

    long lastId() {
        return lastId;
    }

    void countDelivered() {
        delivered.increment();
    }

    void countDropped() {
        dropped.increment();
    }

    TopicStats stats() {
        return new TopicStats(key, subscriberCount, published.sum(), delivered.sum(), dropped.sum());
    }
}

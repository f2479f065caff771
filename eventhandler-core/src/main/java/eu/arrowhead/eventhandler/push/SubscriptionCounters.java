package eu.arrowhead.eventhandler.push;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** A counter per push subscription, for a metric labelled with its id; a subscription appears once counted. */
public final class SubscriptionCounters {
    private final Map<Long, LongAdder> counters = new ConcurrentHashMap<>();

    public void add(long subscriptionId, long count) {
        if (count > 0) {
            counters.computeIfAbsent(subscriptionId, id -> new LongAdder()).add(count);
        }
    }

    /** The subscription is gone: so is its counter. */
    public void remove(long subscriptionId) {
        counters.remove(subscriptionId);
    }

    /** The counts now, by subscription id. */
    public Map<Long, Long> sums() {
        Map<Long, Long> counts = new HashMap<>();
        counters.forEach((id, count) -> counts.put(id, count.sum()));
        return counts;
    }
}

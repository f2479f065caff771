package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that push subscriptions may hold ({@code push.total-max-bytes}): half for the subscriptions
 * themselves, half for the events queued for them. Both grow with what clients send, so both are counted in
 * estimated bytes rather than only in subscriptions and events: a subscription is up to a request body of
 * metadata filters and sources, a queued event up to a payload limit.
 *
 * <p>Subscriptions: one more is refused (503) when it would take the subscriptions past their half.
 *
 * <p>Queues, the rule of the SSE subscribers' queues: a queued body is counted once per queue that holds it
 * (the bodies are shared, so this is an upper bound), and so is the body being POSTed or waiting for its
 * retry. Once all queues hold half of their half, a subscriber whose queue would grow past its share of the
 * other half (that half divided among the subscriptions) takes no more: a cursor in the event log
 * ({@link LogCursor}) reads the rest from the log later, a queue in memory ({@link PushSubscriber}) loses its
 * oldest events instead, counted as dropped. A subscriber that keeps up is not touched, unless one event alone
 * is larger than its share while the queues are under pressure; and the queues never hold more than their half,
 * but for one exception: a cursor that holds nothing takes the next event of the log whatever its size, or one
 * larger than the share could never be delivered (so at most one event per subscription more).
 */
final class PushBudget {
    /** A subscription's objects besides its strings and collections: entry, subscriber, queue, rules, URI. */
    private static final long SUBSCRIPTION_BYTES = 2_048;
    /** A map entry or list element, with its strings' headers: small strings cost far more than their JSON. */
    private static final long ELEMENT_BYTES = 160;
    /** A queued event besides its bytes: the body object and its slot in the queue. */
    private static final long QUEUED_EVENT_BYTES = 48;

    private final long subscriptionsMax;
    private final long queuesMax;
    private final long queuesPressure;
    private final AtomicLong subscriptions = new AtomicLong();
    private final AtomicInteger subscriptionCount = new AtomicInteger();
    private final AtomicLong queued = new AtomicLong();

    PushBudget(long totalBytes) {
        this.subscriptionsMax = totalBytes / 2;
        this.queuesMax = totalBytes / 2;
        this.queuesPressure = totalBytes / 4;
    }

    /** What a subscription holds on the heap, estimated on the safe side from the request and its JSON. */
    static long cost(SubscriptionRequest request, int jsonBytes) {
        long elements = size(request.filterMetaData()) + (request.sources() == null ? 0 : request.sources().size());
        elements += systemElements(request.subscriberSystem());
        if (request.sources() != null) {
            for (SystemRequest source : request.sources()) {
                elements += systemElements(source);
            }
        }
        // The request is kept as parsed and its JSON is made again for each store write and response.
        return SUBSCRIPTION_BYTES + 2L * jsonBytes + ELEMENT_BYTES * elements;
    }

    private static long systemElements(SystemRequest system) {
        return system == null ? 0 : 4 + size(system.metadata());
    }

    private static long size(Map<?, ?> map) {
        return map == null ? 0 : map.size();
    }

    /** What a queued event counts: the bytes its body holds (the frame, later its JSON) and its entry. */
    static long cost(PushBody body) {
        return QUEUED_EVENT_BYTES + body.sizeBytes();
    }

    /** Takes room for a subscription, or returns false if the subscriptions' half has none left. */
    boolean reserveSubscription(long cost) {
        if (subscriptions.addAndGet(cost) > subscriptionsMax) {
            subscriptions.addAndGet(-cost);
            return false;
        }
        subscriptionCount.incrementAndGet();
        return true;
    }

    /** Counts a subscription loaded from the store at start, which is kept even past the budget. */
    void chargeSubscription(long cost) {
        subscriptions.addAndGet(cost);
        subscriptionCount.incrementAndGet();
    }

    void releaseSubscription(long cost) {
        subscriptions.addAndGet(-cost);
        subscriptionCount.decrementAndGet();
    }

    /** Changes a subscription's charge, or returns false if growing it would take the subscriptions' half past. */
    boolean tryResizeSubscription(long from, long to) {
        if (subscriptions.addAndGet(to - from) > subscriptionsMax && to > from) {
            subscriptions.addAndGet(from - to);
            return false;
        }
        return true;
    }

    /** Changes a subscription's charge back to what it was, whatever the budget. */
    void resizeSubscription(long from, long to) {
        subscriptions.addAndGet(to - from);
    }

    /** Whether the subscriptions hold more than their half (stored ones are loaded whatever their size). */
    boolean subscriptionsOverBudget() {
        return subscriptions.get() > subscriptionsMax;
    }

    /**
     * Whether a queue holding {@code queueBytes} may take {@code cost} more. The share is divided among the
     * subscriptions there are now, so a queue that filled while there were fewer may hold more than today's
     * share; the queues' half caps them all the same. Offers come under the hub's lock; only a sender's
     * release (which lowers the total) can come in between reading and adding.
     */
    boolean admits(long queueBytes, long cost) {
        long all = queued.get() + cost;
        if (all <= queuesPressure) {
            return true;
        }
        return queueBytes + cost <= queuesPressure / Math.max(1, subscriptionCount.get()) && all <= queuesMax;
    }

    void took(long cost) {
        queued.addAndGet(cost);
    }

    void released(long cost) {
        queued.addAndGet(-cost);
    }

    /** Bytes all push queues hold now. */
    long queuedBytes() {
        return queued.get();
    }

    /** Bytes all push subscriptions are charged now. */
    long subscriptionBytes() {
        return subscriptions.get();
    }
}

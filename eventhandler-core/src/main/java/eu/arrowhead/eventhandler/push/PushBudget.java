package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
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
 * is larger than its share while the queues are under pressure.
 *
 * <p>A cursor that holds nothing may take its next event past its share, up to the queues' half (an event larger
 * than the share would otherwise never be delivered); one that does not fit even so waits in line for room
 * ({@link #takeFirst}). So the queues never hold more than their half, or one event alone when a single event is
 * larger than that, however many subscriptions there are.
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
    /** Deliveries holding nothing whose next event did not fit, oldest first. Guarded by itself. */
    private final ArrayDeque<Waiter> line = new ArrayDeque<>();
    /** The cost of the first waiter's event (0: none waits): room every other taker leaves free for it. */
    private volatile long kept;

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
     * share; the queues' half caps them all the same. The room kept for the first waiter counts as taken.
     */
    boolean admits(long queueBytes, long cost) {
        return admits(queued.get(), queueBytes, cost);
    }

    private boolean admits(long queuedNow, long queueBytes, long cost) {
        long all = queuedNow + kept + cost;
        if (all <= queuesPressure) {
            return true;
        }
        return queueBytes + cost <= queuesPressure / Math.max(1, subscriptionCount.get()) && all <= queuesMax;
    }

    /** {@link #admits} and {@link #took} in one step, so that takers on other threads cannot pass the half. */
    boolean tryTake(long queueBytes, long cost) {
        for (long now = queued.get(); admits(now, queueBytes, cost); now = queued.get()) {
            if (queued.compareAndSet(now, now + cost)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Takes room for the next event of a delivery that holds nothing, past its share up to the queues' half; or,
     * when it does not fit or others wait before it, puts {@code waiter} in line (once) and returns false.
     *
     * <p>Why a line rather than the event taken whatever its size (which never stalled a cursor): with a thousand
     * subscriptions and 64 KiB events that alone was 64 MB, the whole of a small heap. Why not a reserve of one
     * largest event per subscription, checked at subscribe: at 1/16 of a 64 MiB heap it would allow some thirty
     * subscriptions. In line, the first waiter's room is kept from every other taker and it is woken once that
     * room is free, so it cannot be starved by smaller events; one larger than the half goes once the queues
     * hold nothing. Its event stays in the log meanwhile: nothing is skipped.
     */
    boolean takeFirst(Waiter waiter, long cost) {
        List<Runnable> woken = new ArrayList<>(1);
        try {
            synchronized (line) {
                Waiter first = line.peek();
                if ((first == null || first == waiter) && takeAlone(cost)) {
                    if (first != null) {
                        line.poll();
                        wakeFirst(woken);
                    }
                    return true;
                }
                waiter.cost = cost;
                waiter.woken = false;
                if (!line.contains(waiter)) {
                    line.add(waiter);
                }
                wakeFirst(woken);
                return false;
            }
        } finally {
            woken.forEach(Runnable::run);
        }
    }

    /**
     * Takes room for an event of a delivery that holds nothing, past its share up to the queues' half (or the
     * event alone into empty queues), without the line: a sysop's redelivery, refused rather than kept waiting.
     */
    boolean takeAlone(long cost) {
        for (long now = queued.get(); fitsAlone(now, cost); now = queued.get()) {
            if (queued.compareAndSet(now, now + cost)) {
                return true;
            }
        }
        return false;
    }

    private boolean fitsAlone(long queuedNow, long cost) {
        return queuedNow + cost <= queuesMax || queuedNow == 0;
    }

    /** Takes {@code waiter} out of line, if it is in it: its delivery reads or holds no more for now. */
    void leave(Waiter waiter) {
        if (kept == 0) {
            return;
        }
        List<Runnable> woken = new ArrayList<>(1);
        synchronized (line) {
            if (line.remove(waiter)) {
                wakeFirst(woken);
            }
        }
        woken.forEach(Runnable::run);
    }

    /** Keeps the first waiter's room, and wakes it once that room is free. Under the line's lock. */
    private void wakeFirst(List<Runnable> woken) {
        Waiter first = line.peek();
        kept = first == null ? 0 : first.cost;
        if (first != null && !first.woken && fitsAlone(queued.get(), first.cost)) {
            first.woken = true;
            woken.add(first.wake);
        }
    }

    void took(long cost) {
        queued.addAndGet(cost);
    }

    void released(long cost) {
        queued.addAndGet(-cost);
        if (kept == 0) {
            return;
        }
        List<Runnable> woken = new ArrayList<>(1);
        synchronized (line) {
            wakeFirst(woken);
        }
        woken.forEach(Runnable::run);
    }

    /** Bytes all push queues hold now. */
    long queuedBytes() {
        return queued.get();
    }

    /** Bytes all push subscriptions are charged now. */
    long subscriptionBytes() {
        return subscriptions.get();
    }

    /** Deliveries waiting in line for room now. */
    int waiting() {
        synchronized (line) {
            return line.size();
        }
    }

    /**
     * A delivery's place in line. {@code wake} asks it to try again; it is run once until the delivery has tried,
     * never under the line's lock, and must take no delivery's monitor (a release under one may run it).
     */
    static final class Waiter {
        private final Runnable wake;
        /** Guarded by the line, as is {@link #woken}. */
        private long cost;
        private boolean woken;

        Waiter(Runnable wake) {
            this.wake = wake;
        }
    }
}

package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Subscriber;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Single-node mode's push delivery, the hub's side of one push subscription: takes the subscription's events under the hub's lock into its
 * own bounded queue, and hands them to the {@link PushSender} one at a time, so that the subscriber receives
 * them in order and at most one POST to it is in flight. A subscriber that is down or slow fills only its
 * own queue; past {@code push.queue-capacity}, or past its share of the heap ({@link PushBudget}), its
 * oldest events are dropped (counted).
 *
 * <p>The subscription's rules can change (subscribing again, {@code PUT}, an authorization update) without
 * losing what is queued: they are swapped as a whole.
 */
final class PushSubscriber implements Subscriber, PushDelivery {
    private final Hub hub;
    private final PushSender sender;
    private final int capacity;
    private final PushBudget budget;
    private final ArrayDeque<PushBody> queue = new ArrayDeque<>();
    /** Guarded by this: what the queue and the body in flight are charged ({@link PushBudget#cost(PushBody)}). */
    private long queuedBytes;
    /**
     * Guarded by this: the body being POSTed or waiting for its retry. It stays charged until the sender
     * asks for the next one, which it does once this one is delivered or given up.
     */
    private PushBody inFlight;
    private final Runnable startSending;
    private volatile PushRules rules;
    /** Guarded by this: a body is being sent (or waits for its retry), and nothing else may start. */
    private boolean sending;
    private boolean closed;
    /** Guarded by this: POSTs that failed since the last that succeeded; the sender logs a run's start and end. */
    private int failedInARow;

    PushSubscriber(Hub hub, PushSender sender, int capacity, PushBudget budget, PushRules rules) {
        this.hub = hub;
        this.sender = sender;
        this.capacity = capacity;
        this.budget = budget;
        this.rules = rules;
        this.startSending = () -> sender.start(this);
    }

    @Override
    public void follow(String topicKey) {
        hub.subscribe(Set.of(topicKey), this, OptionalLong.empty());
    }

    @Override
    public void unfollow(String topicKey) {
        hub.unsubscribe(Set.of(topicKey), this);
    }

    @Override
    public void rules(PushRules changed) {
        rules = changed;
    }

    URI target() {
        return rules.target();
    }

    @Override
    public SubscriberFilter filter() {
        return rules.filter();
    }

    @Override
    public void offer(PublishedEvent event, Publication publication) {
        if (!rules.inWindow(event.timeStampMillis())) {
            return;
        }
        PushBody body = sender.bodyFor(event);
        long cost = PushBudget.cost(body);
        boolean start;
        synchronized (this) {
            if (closed) {
                return;
            }
            while (!queue.isEmpty() && (queue.size() >= capacity || !budget.admits(queuedBytes, cost))) {
                release(queue.poll());
                sender.countDropped();
            }
            if (!budget.admits(queuedBytes, cost)) {
                // Even alone it is past this subscriber's share while the queues are under pressure.
                sender.countDropped();
                return;
            }
            queue.add(body);
            queuedBytes += cost;
            budget.took(cost);
            start = !sending;
            sending = true;
        }
        if (start) {
            // Waking a sender takes the executor's lock: not while every other publisher waits for the hub.
            // (Outside a publish, as for sync mode's committed events, it happens at once, under the lock.)
            publication.afterHubLock(startSending);
        }
    }

    /**
     * The next body to send, or {@code null} when the queue is empty: then sending stops until an offer.
     * The sender calls it once the previous body is delivered or given up, which gives that one's charge back.
     */
    synchronized PushBody next() {
        if (inFlight != null) {
            release(inFlight);
        }
        inFlight = closed ? null : queue.poll();
        if (inFlight == null) {
            sending = false;
        }
        return inFlight;
    }

    private void release(PushBody body) {
        long cost = PushBudget.cost(body);
        queuedBytes -= cost;
        budget.released(cost);
    }

    /** @return whether this failure starts a run of them: the first since a POST succeeded */
    synchronized boolean failedOnce() {
        return failedInARow++ == 0;
    }

    /** @return how many POSTs had failed in a row before this one succeeded */
    synchronized int succeeded() {
        int failures = failedInARow;
        failedInARow = 0;
        return failures;
    }

    synchronized boolean closed() {
        return closed;
    }

    @Override
    public synchronized int queued() {
        return queue.size();
    }

    /** Stops sending: what is queued is discarded, a POST in flight ends on its own. */
    @Override
    public synchronized void close() {
        closed = true;
        queue.forEach(this::release);
        queue.clear();
        if (inFlight != null) {
            release(inFlight);
            inFlight = null;
        }
    }
}

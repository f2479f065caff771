package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.Publication;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Push delivery without an event store ({@code store.mode=off}), the hub's side of one push subscription: takes
 * the subscription's events under the hub's lock into its own bounded queue, and hands them to the
 * {@link PushSender} one at a time, so that the subscriber receives them in order and at most one POST to it is
 * in flight. A subscriber that is down or slow fills only its
 * own queue; past {@code push.queue-capacity}, or past its share of the heap ({@link PushBudget}), its
 * oldest events are dropped (counted).
 */
final class PushSubscriber extends HubDelivery {
    private final Hub hub;
    private final int capacity;
    /** Guarded by this: the queue and the body in flight, which stays charged until the sender asks for the next. */
    private final HeldEvents held;
    private final Runnable startSending;
    /** Guarded by this: a body is being sent (or waits for its retry), and nothing else may start. */
    private boolean sending;
    private boolean closed;
    /** Guarded by this: POSTs that failed since the last that succeeded; the sender logs a run's start and end. */
    private int failedInARow;

    PushSubscriber(Hub hub, PushSender sender, int capacity, PushBudget budget, PushRules rules) {
        super(sender, rules);
        this.hub = hub;
        this.capacity = capacity;
        this.held = new HeldEvents(budget);
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
    void offer(PushBody body, Publication publication) {
        boolean start;
        synchronized (this) {
            if (closed) {
                return;
            }
            while (held.waiting() > 0 && (held.waiting() >= capacity || !held.admits(body))) {
                held.dropOldest();
                sender.countDropped();
            }
            if (!held.admits(body)) {
                // Even alone it is past this subscriber's share while the queues are under pressure.
                sender.countDropped();
                return;
            }
            held.add(body);
            start = !sending;
            sending = true;
        }
        if (start) {
            // Waking a sender takes the executor's lock: not while every other publisher waits for the hub.
            // (Outside a publish, as for sync mode's committed events, it happens at once, under the lock.)
            publication.afterHubLock(startSending);
        }
    }

    /** The next body to send, or {@code null} when the queue is empty: then sending stops until an offer. */
    @Override
    public synchronized PushBody next() {
        PushBody next = held.next();
        if (next == null) {
            sending = false;
        }
        return next;
    }

    @Override
    public synchronized boolean failedOnce() {
        return failedInARow++ == 0;
    }

    @Override
    public synchronized int succeeded() {
        int failures = failedInARow;
        failedInARow = 0;
        return failures;
    }

    @Override
    public synchronized boolean closed() {
        return closed;
    }

    /** Its events live only in this queue: a POST is retried up to {@code push.max-retries} times. */
    @Override
    public boolean durable() {
        return false;
    }

    @Override
    public synchronized int queued() {
        return held.waiting();
    }

    /** The server stops: what is queued is lost, as this queue is all there is of it. */
    @Override
    public void stop() {
        close();
    }

    /** Stops sending: what is queued is discarded, a POST in flight ends on its own. */
    @Override
    public synchronized void close() {
        closed = true;
        held.clear();
    }
}

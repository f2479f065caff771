package eu.arrowhead.eventhandler.push;

/**
 * How one push subscription's events reach its subscriber, one event in flight at a time. In single-node mode
 * with an event store it is a durable cursor in the log ({@link LogCursor}); without one, a subscriber of this
 * node's hub with a bounded queue ({@link PushSubscriber}); in cluster mode a durable cursor in the shared stream
 * that every node reads from. {@link PushSubscriptions} keeps the subscriptions and tells their deliveries what
 * changed.
 */
public interface PushDelivery {

    /** Starts receiving the events of a topic (the subscription's event type, or a new one it moved to). */
    void follow(String topicKey);

    /**
     * Moves to another topic (the subscription's event type changed); {@code save} keeps the move in the store,
     * and what it throws is thrown on. This default follows the new topic, saves, and leaves the old one; a failed
     * save only unfollows the new topic again, which undoes nothing a {@link #follow} changed in the delivery's
     * position (a cursor in the log overrides it to move only once the save succeeded).
     */
    default void move(String fromTopic, String toTopic, Runnable save) {
        follow(toTopic);
        try {
            save.run();
        } catch (RuntimeException e) {
            unfollow(toTopic);
            throw e;
        }
        unfollow(fromTopic);
    }

    /** Stops receiving the events of a topic it followed. */
    void unfollow(String topicKey);

    /** Replaces the rules; whatever is already held is sent under the new ones. */
    void rules(PushRules rules);

    /** Events waiting to be sent from this node's memory (a cursor's backlog in a log is not counted). */
    int queued();

    /** Why its delivery is paused (it set aside too many events in a row), or {@code null}: it is not. */
    default String pausedBecause() {
        return null;
    }

    /** Stops delivering for good: the subscription is gone. */
    void close();

    /** Makes the delivery of a subscription. */
    interface Factory {
        /** A delivery that follows no topic yet. */
        PushDelivery create(long subscriptionId, PushRules rules);
    }
}

package eu.arrowhead.eventhandler.store;

import java.util.List;
import java.util.Map;

/**
 * Where push subscriptions are kept across restarts: the event store's database, or nowhere when
 * {@code store.mode=off} ({@link #NONE}). Blocking; called on request threads, never per event.
 */
public interface SubscriptionStore {

    /** Keeps nothing: subscriptions live in memory only. */
    SubscriptionStore NONE = new SubscriptionStore() {
        @Override
        public List<StoredSubscription> loadSubscriptions() {
            return List.of();
        }

        @Override
        public void saveSubscription(StoredSubscription subscription) {
        }

        @Override
        public void deleteSubscription(long id) {
        }
    };

    /** Every subscription kept, in id order. */
    List<StoredSubscription> loadSubscriptions();

    /** Inserts the subscription, or replaces the one with its id. */
    void saveSubscription(StoredSubscription subscription);

    /** Deletes the subscription with this id, if there is one, and its cursor. */
    void deleteSubscription(long id);

    /**
     * The push subscriptions' cursors in the event log, by subscription id: the last event id each subscriber
     * acknowledged. Empty where nothing is kept, and in cluster mode, whose cursors live in the stream.
     */
    default Map<Long, Long> loadCursors() {
        return Map.of();
    }

    /** Inserts or moves the cursors of these subscriptions (subscription id to acknowledged id), in one go. */
    default void saveCursors(Map<Long, Long> acknowledged) {
    }

    /**
     * The id of a new subscription. One store per server: after the last id it knows. A store shared by the nodes
     * of a cluster gives ids no node has given.
     *
     * @param lastId the largest id this server knows
     */
    default long nextSubscriptionId(long lastId) {
        return lastId + 1;
    }

    /**
     * A push subscription as kept.
     *
     * @param id            the subscription's id, given by the Event Handler
     * @param topicKey      its event type in lower case
     * @param subscriberKey its subscriber's system name in lower case
     * @param createdMillis when it was created
     * @param updatedMillis when it last changed
     * @param json          the subscription request as accepted (a {@code SubscriptionRequest})
     */
    record StoredSubscription(long id, String topicKey, String subscriberKey, long createdMillis, long updatedMillis,
                              String json) {
    }
}

package eu.arrowhead.eventhandler.store;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

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

    /** Deletes the subscription with this id, if there is one, its cursor and its dead letters. */
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
        saveCursors(acknowledged, List.of(), Integer.MAX_VALUE);
    }

    /**
     * Inserts or moves the cursors, and keeps the dead letters (one already kept for its subscription and event is
     * replaced), in one transaction: a cursor is never kept past an event set aside that is not. A subscription's
     * list that grows past {@code keepPerSubscription} loses its oldest letters; those of a subscription that no
     * longer exists are not kept.
     *
     * @return how many letters each subscription lost to the bound, by subscription id (none: absent)
     */
    default Map<Long, Integer> saveCursors(Map<Long, Long> acknowledged, List<DeadLetter> deadLetters,
                                           int keepPerSubscription) {
        return Map.of();
    }

    /** A page of a subscription's dead letters: at most {@code limit} after {@code afterEventId}, in event id order. */
    default List<DeadLetter> loadDeadLetters(long subscriptionId, long afterEventId, int limit) {
        return List.of();
    }

    /**
     * How many dead letters a subscription has, counting also the letters of {@code alsoListed} (event ids) that are
     * not stored yet, each once.
     */
    default long countDeadLetters(long subscriptionId, Set<Long> alsoListed) {
        return alsoListed.size();
    }

    /**
     * Deletes dead letters of a subscription: the one of this event, or all.
     *
     * @return how many were deleted
     */
    default int deleteDeadLetters(long subscriptionId, OptionalLong eventId) {
        return 0;
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

    /**
     * An event a push subscriber refused for good, set aside so that its cursor could go on.
     *
     * @param subscriptionId the subscription
     * @param eventId        the event's id in the log
     * @param eventType      the event's type as published
     * @param status         the last answer's HTTP status, or 0 if the last try got none (an I/O error)
     * @param answer         the first bytes of the last answer's body, or the I/O error; bounded
     * @param atMillis       when it was set aside
     */
    record DeadLetter(long subscriptionId, long eventId, String eventType, int status, String answer, long atMillis) {
    }
}

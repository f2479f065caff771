package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.RedeliveryResponse;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The push subscriptions' dead-letter lists as management and the metrics see them, wherever they are kept: in the
 * single node's database beside the cursors ({@link LocalDeadLetterLists}), or in the bucket every node of a cluster
 * shares. {@link DeadLettersResource} answers through it alone, so that both modes answer alike.
 */
public interface DeadLetterLists {

    /**
     * A page of a subscription's letters: at most {@code limit} after {@code afterEventId}, in event id order.
     *
     * @throws RuntimeException if the letters cannot be read now
     */
    List<DeadLetter> list(long subscriptionId, long afterEventId, int limit);

    /**
     * How many letters a subscription has.
     *
     * @throws RuntimeException if the letters cannot be read now
     */
    long count(long subscriptionId);

    /**
     * Drops a subscription's letter of one event, or all of them.
     *
     * @return how many were dropped
     * @throws eu.arrowhead.eventhandler.protocol.RequestException 404 if the letter of {@code eventId} is not listed
     * @throws RuntimeException                                    if the letters cannot be written now
     */
    int drop(long subscriptionId, OptionalLong eventId);

    /**
     * Sends a subscription's letters (all, or the one of {@code eventId}) again, and resumes it if it was paused.
     * A letter stays listed until its subscriber takes it.
     *
     * @return empty if this node has no such subscription
     * @throws eu.arrowhead.eventhandler.protocol.RequestException 404 if the letter of {@code eventId} is not listed
     * @throws RuntimeException                                    if the letters or the events cannot be read now
     */
    Optional<RedeliveryResponse> redeliver(long subscriptionId, OptionalLong eventId);

    /**
     * Resumes a paused subscription.
     *
     * @return empty if this node has no such subscription, else whether it was paused
     */
    Optional<Boolean> resume(long subscriptionId);

    /** Events this node set aside, by subscription id. */
    Map<Long, Long> setAsideCounts();

    /** Letters this node dropped past {@code push.dead-letter-max}, by subscription id. */
    Map<Long, Long> droppedCounts();

    /** How many subscriptions are paused now. */
    int paused();
}

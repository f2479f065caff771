package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.RedeliveryResponse;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A single node's dead-letter lists: the letters its {@link LogCursors} keep in the database ({@link DeadLetters}),
 * and the cursors that send them again and pause.
 */
public final class LocalDeadLetterLists implements DeadLetterLists {
    private final LogCursors cursors;

    public LocalDeadLetterLists(LogCursors cursors) {
        this.cursors = cursors;
    }

    @Override
    public List<DeadLetter> list(long subscriptionId, long afterEventId, int limit) {
        return cursors.deadLetters().list(subscriptionId, afterEventId, limit);
    }

    @Override
    public long count(long subscriptionId) {
        return cursors.deadLetters().count(subscriptionId);
    }

    @Override
    public int drop(long subscriptionId, OptionalLong eventId) {
        return cursors.deadLetters().drop(subscriptionId, eventId);
    }

    @Override
    public Optional<RedeliveryResponse> redeliver(long subscriptionId, OptionalLong eventId) {
        return cursors.redeliver(subscriptionId, eventId);
    }

    @Override
    public Optional<Boolean> resume(long subscriptionId) {
        return cursors.resume(subscriptionId);
    }

    @Override
    public Map<Long, Long> setAsideCounts() {
        return cursors.deadLetters().setAsideCounts();
    }

    @Override
    public Map<Long, Long> droppedCounts() {
        return cursors.deadLetters().droppedCounts();
    }

    @Override
    public int paused() {
        return cursors.paused();
    }
}

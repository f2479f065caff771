package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The push subscriptions' dead-letter lists: events their subscribers refused for good, set aside so that the
 * cursors went on. They live in the database ({@code eh_push_dead_letter}), not the heap: a letter set aside waits
 * here only until {@link LogCursors}' next save, which keeps it in the same transaction as the cursor that passed it.
 * Counted per subscription: those set aside, and those the bound ({@code push.dead-letter-max}) dropped.
 *
 * <p>A letter taken by a save is in neither the pending list nor the database until the save commits: it is kept
 * as {@code saving} meanwhile, so that a list sees it and a drop finds it. A drop of a letter being saved is
 * remembered and applied once the save has committed ({@link #saved}); a save that fails puts back only the
 * letters not dropped meanwhile.
 */
public final class DeadLetters {
    private final SubscriptionStore store;
    private final int keep;
    /** Set aside, not yet saved; guarded by this. */
    private List<DeadLetter> pending = new ArrayList<>();
    /** Taken by the save under way, not yet committed; guarded by this. */
    private List<DeadLetter> saving = List.of();
    /** Dropped while their save was under way: deleted from the database once it committed. Guarded by this. */
    private final List<DeadLetter> droppedWhileSaving = new ArrayList<>();
    private final SubscriptionCounters setAside = new SubscriptionCounters();
    private final SubscriptionCounters dropped = new SubscriptionCounters();

    DeadLetters(SubscriptionStore store, int keep) {
        this.store = store;
        this.keep = keep;
    }

    /** The most letters one subscription keeps. */
    int keep() {
        return keep;
    }

    /** A letter set aside: saved with the next save of the cursors. */
    synchronized void add(DeadLetter letter) {
        pending.add(letter);
        setAside.add(letter.subscriptionId(), 1);
    }

    /** The letters to save now, one save at a time: {@link #saved} once it committed, {@link #putBack} if not. */
    synchronized List<DeadLetter> takePending() {
        saving = pending;
        pending = new ArrayList<>();
        return saving;
    }

    /**
     * A save failed: its letters that were not dropped meanwhile go before those set aside since, so that a later
     * letter of an event wins.
     */
    synchronized void putBack(List<DeadLetter> letters) {
        List<DeadLetter> again = new ArrayList<>(letters);
        again.removeAll(droppedWhileSaving);
        droppedWhileSaving.clear();
        again.addAll(pending);
        pending = again;
        saving = List.of();
    }

    /**
     * The save of what {@link #takePending} gave committed: the letters dropped meanwhile are deleted now. One the
     * store cannot delete now stays hidden from the list and is deleted after the next save.
     */
    void saved() {
        List<DeadLetter> due;
        synchronized (this) {
            saving = List.of();
            if (droppedWhileSaving.isEmpty()) {
                return;
            }
            due = List.copyOf(droppedWhileSaving);
        }
        for (DeadLetter letter : due) {
            store.deleteDeadLetters(letter.subscriptionId(), OptionalLong.of(letter.eventId()));
            synchronized (this) {
                droppedWhileSaving.remove(letter);
            }
        }
    }

    /** The save cut lists to their bound: letters dropped, by subscription. */
    void droppedByBound(Map<Long, Integer> counts) {
        counts.forEach(dropped::add);
    }

    /**
     * A page of a subscription's letters, those not yet saved too: at most {@code limit} after {@code afterEventId},
     * in event id order.
     *
     * @throws RuntimeException if the store cannot be read
     */
    public List<DeadLetter> list(long subscriptionId, long afterEventId, int limit) {
        // The letters not yet saved are taken before the store is read: one whose save commits meanwhile is then
        // in both (and listed once), never in neither.
        List<DeadLetter> unsaved;
        List<DeadLetter> hidden;
        synchronized (this) {
            unsaved = unsaved(subscriptionId).filter(letter -> letter.eventId() > afterEventId).toList();
            hidden = List.copyOf(droppedWhileSaving);
        }
        // Those dropped while being saved may be on the store's page: read past them, so that the page stays full.
        List<DeadLetter> stored = store.loadDeadLetters(subscriptionId, afterEventId, limit + hidden.size());
        Map<Long, DeadLetter> byEvent = new TreeMap<>();
        stored.forEach(letter -> byEvent.put(letter.eventId(), letter));
        // In the order a save would write them: a later letter of an event wins.
        unsaved.forEach(letter -> byEvent.put(letter.eventId(), letter));
        hidden.forEach(letter -> byEvent.remove(letter.eventId(), letter));
        return byEvent.values().stream().limit(limit).toList();
    }

    /**
     * How many letters a subscription has, each event once: those not yet saved are taken before the store counts,
     * in one statement, what it holds of them too.
     *
     * @throws RuntimeException if the store cannot be read
     */
    public long count(long subscriptionId) {
        Set<Long> unsaved;
        synchronized (this) {
            unsaved = unsaved(subscriptionId).map(DeadLetter::eventId).collect(Collectors.toSet());
        }
        return store.countDeadLetters(subscriptionId, unsaved);
    }

    /** The subscription's letters being saved or waiting for a save, not dropped. Under this. */
    private Stream<DeadLetter> unsaved(long subscriptionId) {
        return Stream.concat(saving.stream(), pending.stream())
                .filter(letter -> letter.subscriptionId() == subscriptionId && !droppedWhileSaving.contains(letter));
    }

    /**
     * Drops a subscription's letter of one event, or all of them.
     *
     * @return how many were dropped (0 for all of an empty list)
     * @throws RequestException 404 if the letter of {@code eventId} is not on the list
     * @throws RuntimeException if the store cannot be written
     */
    int drop(long subscriptionId, OptionalLong eventId) {
        int unsaved;
        synchronized (this) {
            int before = pending.size();
            pending.removeIf(letter -> matches(letter, subscriptionId, eventId));
            unsaved = before - pending.size();
            for (DeadLetter letter : saving) {
                if (matches(letter, subscriptionId, eventId) && !droppedWhileSaving.contains(letter)) {
                    droppedWhileSaving.add(letter);
                    unsaved++;
                }
            }
        }
        int dropped = unsaved + store.deleteDeadLetters(subscriptionId, eventId);
        if (dropped == 0 && eventId.isPresent()) {
            throw notListed(subscriptionId, eventId.getAsLong());
        }
        return dropped;
    }

    private static boolean matches(DeadLetter letter, long subscriptionId, OptionalLong eventId) {
        return letter.subscriptionId() == subscriptionId
                && (eventId.isEmpty() || letter.eventId() == eventId.getAsLong());
    }

    /** The 404 for an event that is not on a subscription's list. */
    public static RequestException notListed(long subscriptionId, long eventId) {
        return new RequestException(404, ExceptionType.DATA_NOT_FOUND, "event " + eventId + " is not on push"
                + " subscription " + subscriptionId + "'s dead-letter list");
    }

    /** The subscription is gone; the store deletes its letters with it. */
    synchronized void forget(long subscriptionId) {
        pending.removeIf(letter -> letter.subscriptionId() == subscriptionId);
        droppedWhileSaving.removeIf(letter -> letter.subscriptionId() == subscriptionId);
        setAside.remove(subscriptionId);
        dropped.remove(subscriptionId);
    }

    /** Events set aside, by subscription id. */
    public Map<Long, Long> setAsideCounts() {
        return setAside.sums();
    }

    /** Letters the bound dropped, by subscription id. */
    public Map<Long, Long> droppedCounts() {
        return dropped.sums();
    }
}

package eu.arrowhead.eventhandler.store;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The statements on push subscriptions and their cursors ({@link SubscriptionRecord}, {@link CursorRecord}): each
 * runs as the database's upkeep, on a reader connection, in a transaction of its own; a cursor's save keeps the
 * dead letters found with it ({@link DeadLetterTable#keep}) in its transaction.
 */
final class PushSubscriptionTable {
    private final EventDatabase database;

    PushSubscriptionTable(EventDatabase database) {
        this.database = database;
    }

    /** Every push subscription, in id order. */
    List<SubscriptionStore.StoredSubscription> subscriptions() {
        return database.upkeepStateless(session -> session.createSelectionQuery(
                "from SubscriptionRecord s order by s.id", SubscriptionRecord.class).getResultList())
                .stream().map(SubscriptionRecord::stored).toList();
    }

    /** Inserts or replaces a push subscription by its id. */
    void save(SubscriptionStore.StoredSubscription subscription) {
        database.upkeepTransaction(session -> session.merge(new SubscriptionRecord(subscription)));
    }

    /** Deletes a push subscription, its cursor and its dead letters, in one transaction. */
    void delete(long id) {
        database.upkeepTransaction(session -> session.createMutationQuery(
                "delete from CursorRecord c where c.subscriptionId = :id").setParameter("id", id).executeUpdate()
                + DeadLetterTable.deleteAllOf(session, id)
                + session.createMutationQuery("delete from SubscriptionRecord s where s.id = :id")
                .setParameter("id", id).executeUpdate());
    }

    /**
     * Every push subscription's cursor: its id to the last event id its subscriber acknowledged. A cursor saved
     * as its subscription was deleted is left out, so that a later subscription given the same id starts anew.
     */
    Map<Long, Long> cursors() {
        Map<Long, Long> cursors = new HashMap<>();
        database.upkeepStateless(session -> session.createSelectionQuery(
                "from CursorRecord c where c.subscriptionId in (select s.id from SubscriptionRecord s)",
                CursorRecord.class).getResultList())
                .forEach(row -> cursors.put(row.subscriptionId(), row.acknowledgedId()));
        return cursors;
    }

    /**
     * Inserts or moves push cursors and keeps dead letters, in one transaction ({@link SubscriptionStore#saveCursors(
     * Map, List, int)}).
     */
    Map<Long, Integer> saveCursors(Map<Long, Long> acknowledged, List<SubscriptionStore.DeadLetter> deadLetters,
                                   int keepPerSubscription) {
        if (acknowledged.isEmpty() && deadLetters.isEmpty()) {
            return Map.of();
        }
        return database.upkeepStateless(session -> {
            // Not StatelessSession.upsert: Hibernate's MySQL dialect writes it with MySQL 8's row alias
            // ("values (?,?) as tr on duplicate key update"), which MariaDB refuses as a syntax error.
            if (!acknowledged.isEmpty()) {
                Set<Long> stored = new HashSet<>(session.createSelectionQuery(
                        "select c.subscriptionId from CursorRecord c where c.subscriptionId in :ids", Long.class)
                        .setParameterList("ids", acknowledged.keySet()).getResultList());
                acknowledged.forEach((id, acknowledgedId) -> {
                    CursorRecord row = new CursorRecord(id, acknowledgedId);
                    if (stored.contains(id)) {
                        session.update(row);
                    } else {
                        session.insert(row);
                    }
                });
            }
            return deadLetters.isEmpty() ? Map.<Long, Integer>of()
                    : DeadLetterTable.keep(session, deadLetters, keepPerSubscription);
        });
    }
}

package eu.arrowhead.eventhandler.store;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.hibernate.SharedSessionContract;
import org.hibernate.StatelessSession;

/**
 * The statements on push subscriptions' dead letters ({@link DeadLetterRecord}): the letters kept in the transaction
 * that saves their cursors ({@link PushSubscriptionTable#saveCursors}), deleted in the one that deletes their
 * subscription, and management's pages, count and deletion, which run as the database's upkeep.
 */
final class DeadLetterTable {
    private final EventDatabase database;

    DeadLetterTable(EventDatabase database) {
        this.database = database;
    }

    /**
     * In the caller's transaction: inserts or replaces the letters of subscriptions that exist, then cuts each
     * list to {@code keep}.
     *
     * @return per subscription, how many of its oldest letters were dropped for the bound
     */
    static Map<Long, Integer> keep(StatelessSession session, List<SubscriptionStore.DeadLetter> letters, int keep) {
        Set<Long> subscriptions = new HashSet<>();
        letters.forEach(letter -> subscriptions.add(letter.subscriptionId()));
        Set<Long> existing = new HashSet<>(session.createSelectionQuery(
                "select s.id from SubscriptionRecord s where s.id in :ids", Long.class)
                .setParameterList("ids", subscriptions).getResultList());
        for (SubscriptionStore.DeadLetter letter : letters) {
            if (!existing.contains(letter.subscriptionId())) {
                continue;
            }
            DeadLetterRecord row = new DeadLetterRecord(letter);
            boolean stored = !session.createSelectionQuery("select d.eventId from DeadLetterRecord d"
                            + " where d.subscriptionId = :id and d.eventId = :eventId", Long.class)
                    .setParameter("id", letter.subscriptionId()).setParameter("eventId", letter.eventId())
                    .getResultList().isEmpty();
            if (stored) {
                session.update(row);
            } else {
                session.insert(row);
            }
        }
        Map<Long, Integer> dropped = new HashMap<>();
        for (long id : existing) {
            long count = session.createSelectionQuery(
                    "select count(d) from DeadLetterRecord d where d.subscriptionId = :id", Long.class)
                    .setParameter("id", id).getSingleResult();
            if (count <= keep) {
                continue;
            }
            List<Long> oldest = session.createSelectionQuery("select d.eventId from DeadLetterRecord d"
                            + " where d.subscriptionId = :id order by d.atMillis, d.eventId", Long.class)
                    .setParameter("id", id).setMaxResults((int) (count - keep)).getResultList();
            session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id"
                            + " and d.eventId in :ids")
                    .setParameter("id", id).setParameterList("ids", oldest).executeUpdate();
            dropped.put(id, oldest.size());
        }
        return dropped;
    }

    /** In the caller's transaction: deletes every letter of a subscription; returns how many. */
    static int deleteAllOf(SharedSessionContract session, long subscriptionId) {
        return session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id")
                .setParameter("id", subscriptionId).executeUpdate();
    }

    /** A page of a push subscription's dead letters, in event id order. */
    List<SubscriptionStore.DeadLetter> page(long subscriptionId, long afterEventId, int limit) {
        return database.upkeepStateless(session -> session.createSelectionQuery(
                        "from DeadLetterRecord d where d.subscriptionId = :id and d.eventId > :after"
                                + " order by d.eventId", DeadLetterRecord.class)
                .setParameter("id", subscriptionId).setParameter("after", afterEventId).setMaxResults(limit)
                .getResultList())
                .stream().map(DeadLetterRecord::letter).toList();
    }

    /**
     * How many letters a subscription has, those of {@code alsoListed} (event ids) not stored yet counted too: one
     * statement, so that a letter whose save commits while it is counted is counted once.
     */
    long count(long subscriptionId, Set<Long> alsoListed) {
        if (alsoListed.isEmpty()) {
            return database.upkeepStateless(session -> session.createSelectionQuery(
                    "select count(d) from DeadLetterRecord d where d.subscriptionId = :id", Long.class)
                    .setParameter("id", subscriptionId).getSingleResult());
        }
        Object[] counts = database.upkeepStateless(session -> session.createSelectionQuery(
                "select count(d), sum(case when d.eventId in :ids then 1 else 0 end) from DeadLetterRecord d"
                        + " where d.subscriptionId = :id", Object[].class)
                .setParameter("id", subscriptionId).setParameterList("ids", alsoListed).getSingleResult());
        long stored = ((Number) counts[0]).longValue();
        long storedOfThose = counts[1] == null ? 0 : ((Number) counts[1]).longValue();
        return stored + alsoListed.size() - storedOfThose;
    }

    /** Deletes a push subscription's dead letter of one event, or all of them. */
    int delete(long subscriptionId, OptionalLong eventId) {
        return database.upkeepTransaction(session -> eventId.isPresent()
                ? session.createMutationQuery("delete from DeadLetterRecord d where d.subscriptionId = :id"
                        + " and d.eventId = :eventId").setParameter("id", subscriptionId)
                .setParameter("eventId", eventId.getAsLong()).executeUpdate()
                : deleteAllOf(session, subscriptionId));
    }
}

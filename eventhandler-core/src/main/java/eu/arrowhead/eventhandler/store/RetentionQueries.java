package eu.arrowhead.eventhandler.store;

import java.util.List;
import org.hibernate.Session;

/**
 * The statements of retention ({@link RetentionTask}): where the events it no longer keeps end, by age or by count,
 * and their deletion a chunk per transaction with the watermark raised in each. Run as the database's upkeep, on a
 * reader connection, so the writer never waits for them.
 */
final class RetentionQueries {
    /** Rows deleted per retention transaction, so that retention never holds long locks. */
    private static final int DELETE_CHUNK_IDS = 10_000;

    private final EventDatabase database;

    RetentionQueries(EventDatabase database) {
        this.database = database;
    }

    /** The id of the newest event with a timeStamp before {@code cutoffMillis}, or 0. */
    long lastIdBefore(long cutoffMillis) {
        Long id = database.upkeepStateless(session -> session.createSelectionQuery(
                        "select max(e.id) from EventRecord e where e.timeStampMillis < :cutoff", Long.class)
                .setParameter("cutoff", cutoffMillis).getSingleResult());
        return id == null ? 0 : id;
    }

    /** The id of the event with {@code newer} events after it, or 0 if there are not that many. */
    long idBeforeNewest(long newer) {
        List<Long> ids = database.upkeepStateless(session -> session.createSelectionQuery(
                        "select e.id from EventRecord e order by e.id desc", Long.class)
                .setFirstResult((int) Math.min(newer, Integer.MAX_VALUE)).setMaxResults(1).getResultList());
        return ids.isEmpty() ? 0 : ids.get(0);
    }

    /**
     * Deletes every event with an id up to {@code upToId}, a chunk per transaction, and records the bound.
     *
     * @return the events deleted
     */
    long deleteUpTo(long upToId) {
        long deleted = 0;
        while (true) {
            Long oldest = database.upkeepStateless(session -> session.createSelectionQuery(
                    "select min(e.id) from EventRecord e", Long.class).getSingleResult());
            if (oldest == null || oldest > upToId) {
                return deleted;
            }
            long chunkEnd = Math.min(upToId, oldest + DELETE_CHUNK_IDS);
            deleted += database.upkeepTransaction(session -> {
                int rows = session.createMutationQuery("delete from EventRecord e where e.id <= :upTo")
                        .setParameter("upTo", chunkEnd).executeUpdate();
                raiseDeletedUpTo(session, chunkEnd);
                return rows;
            });
        }
    }

    /** Raises retention's watermark (never lowers it) and forgets the ranges wholly below it. */
    private static void raiseDeletedUpTo(Session session, long upToId) {
        session.createMutationQuery("update StateRecord s set s.value = :upTo where s.name = :name"
                        + " and s.value < :upTo")
                .setParameter("upTo", upToId).setParameter("name", StateRecord.MISSING_UP_TO)
                .executeUpdate();
        session.createMutationQuery("delete from MissingRangeRecord r where r.lastId <= :upTo")
                .setParameter("upTo", upToId).executeUpdate();
    }
}

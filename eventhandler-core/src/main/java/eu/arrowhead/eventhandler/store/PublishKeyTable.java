package eu.arrowhead.eventhandler.store;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The statements on the keyed publishes the log keeps ({@link PublishKeyRecord}): the rows the writer inserts in
 * the transaction of their events ({@link EventDatabase#write}), the keys of the window a start takes back, and
 * retention's deletion of expired ones. Reads and deletions run as the database's upkeep, on a reader connection.
 */
final class PublishKeyTable {
    /** Keys deleted per transaction: their ids are listed in its statement. */
    private static final int DELETE_CHUNK_KEYS = 1_000;

    private final EventDatabase database;

    PublishKeyTable(EventDatabase database) {
        this.database = database;
    }

    /** The rows of a batch's keyed publishes, for its transaction: a key is kept exactly when its events are. */
    static List<PublishKeyRecord> rowsOf(List<WriteBuffer.Entry> batch) {
        List<PublishKeyRecord> keys = new ArrayList<>();
        for (WriteBuffer.Entry entry : batch) {
            if (entry.key().present()) {
                keys.add(new PublishKeyRecord(new StoredKey(entry.key(), entry.firstId(), entry.events().size(),
                        entry.keyedAtMillis())));
            }
        }
        return keys;
    }

    /** The newest {@code max} keyed publishes written at or after {@code cutoffMillis}, oldest first. */
    List<StoredKey> since(long cutoffMillis, int max) {
        List<StoredKey> newestFirst = database.upkeepStateless(session ->
                session.createSelectionQuery("from PublishKeyRecord k where k.createdMillis >= :cutoff"
                                + " order by k.createdMillis desc, k.firstId desc", PublishKeyRecord.class)
                        .setParameter("cutoff", cutoffMillis).setMaxResults(max).getResultList())
                .stream().map(PublishKeyRecord::stored).toList();
        List<StoredKey> oldestFirst = new ArrayList<>(newestFirst);
        Collections.reverse(oldestFirst);
        return oldestFirst;
    }

    /**
     * Deletes the keyed publishes written before {@code cutoffMillis}, {@value #DELETE_CHUNK_KEYS} per transaction,
     * so that no transaction holds many rows locked while the writer inserts.
     *
     * @return the keys deleted
     */
    long deleteBefore(long cutoffMillis) {
        long deleted = 0;
        while (true) {
            List<Long> chunk = database.upkeepStateless(session -> session.createSelectionQuery(
                            "select k.firstId from PublishKeyRecord k where k.createdMillis < :cutoff"
                                    + " order by k.createdMillis", Long.class)
                    .setParameter("cutoff", cutoffMillis).setMaxResults(DELETE_CHUNK_KEYS).getResultList());
            if (chunk.isEmpty()) {
                return deleted;
            }
            deleted += database.upkeepStateless(session -> session.createMutationQuery(
                    "delete from PublishKeyRecord k where k.firstId in :ids")
                    .setParameterList("ids", chunk).executeUpdate());
            if (chunk.size() < DELETE_CHUNK_KEYS) {
                return deleted;
            }
        }
    }
}

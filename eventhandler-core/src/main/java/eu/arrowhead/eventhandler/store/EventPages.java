package eu.arrowhead.eventhandler.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import org.hibernate.ScrollMode;
import org.hibernate.ScrollableResults;
import org.hibernate.StatelessSession;

/**
 * The log's pages, read at a cost that depends on what a page returns, not on how many events the log holds.
 *
 * <p>Why two steps: the obvious query, "events of these topics after this id, by id, the first n", makes H2 walk
 * the topic's index and then sort every event of the range before it returns the first n (2.1-2.8 s for a page
 * of a 500 000-event log; its temporary result on the heap besides). Ordered by {@code (topic_key, id)}, the
 * index's own order, one topic's query stops after n rows ("index sorted" in H2's plan; MySQL walks the same
 * index with no filesort). So each topic's first ids are read from the index alone, merged in Java into the
 * page's ids, and the rows are then read by primary key, a chunk at a time, until the page has as many bytes
 * as it may hold. A page costs one index walk of at most n entries per topic and n primary-key lookups.
 *
 * <p>Memory: at most n ids per topic at a time, and at most {@code maxBytes} of rows (and always one row, so
 * that a page makes progress whatever an event's size).
 */
final class EventPages {
    /** Rows read by primary key in one statement. */
    private static final int LOOKUP_CHUNK = 256;
    /** Rows a driver may hold of a statement at once (MySQL: a server-side cursor's fetch; H2 reads lobs lazily). */
    private static final int FETCH_ROWS = 8;
    /** A time range is not in the index walked: a page examines at most this many events per event it may return. */
    static final int SCAN_FACTOR = 10;

    private EventPages() {
    }

    /**
     * @param rows        the rows, oldest first
     * @param lastScanned the id of the last event examined; the next page starts after it
     * @param more        whether events after {@code lastScanned} may be in the range
     */
    record Page(List<EventRecord> rows, long lastScanned, boolean more) {
    }

    /** Events of the topics in ({@code afterId}, {@code upToId}], oldest first: a page of a replay. */
    static Page replay(StatelessSession session, long afterId, long upToId, Collection<String> topicKeys,
                       int maxEvents, long maxBytes) {
        long[] ids = firstIds(session, afterId, upToId, topicKeys, maxEvents);
        return rows(session, ids, ids.length == maxEvents, maxBytes, null, null, maxEvents);
    }

    /**
     * A page of {@code mgmt/events}: events after {@code afterId} of the topics (every topic when empty), with a
     * timeStamp in the range. With a time range, at most {@value #SCAN_FACTOR} x {@code limit} events are examined
     * and the page may hold fewer than {@code limit} events, even none, with more to come.
     */
    static Page query(StatelessSession session, Collection<String> topicKeys, Long fromMillis, Long toMillis,
                      long afterId, int limit, long maxBytes) {
        boolean timeRange = fromMillis != null || toMillis != null;
        int examined = timeRange ? limit * SCAN_FACTOR : limit;
        long[] ids = topicKeys.isEmpty() ? firstIdsOfAll(session, afterId, examined)
                : firstIds(session, afterId, Long.MAX_VALUE, topicKeys, examined);
        return rows(session, ids, ids.length == examined, maxBytes, timeRange ? fromMillis : null,
                timeRange ? toMillis : null, limit);
    }

    /**
     * Reads the rows of {@code ids} in order, a chunk at a time, until {@code maxBytes} or {@code limit} rows
     * (those outside the time range read and skipped).
     */
    private static Page rows(StatelessSession session, long[] ids, boolean idsFull, long maxBytes, Long fromMillis,
                             Long toMillis, int limit) {
        List<EventRecord> rows = new ArrayList<>();
        long bytes = 0;
        long lastScanned = 0;
        for (int from = 0; from < ids.length; from += LOOKUP_CHUNK) {
            List<Long> chunk = Arrays.stream(ids, from, Math.min(ids.length, from + LOOKUP_CHUNK)).boxed().toList();
            // Scrolled a few rows at a time, never loaded whole: 256 events near the payload limit are 16 MiB.
            try (ScrollableResults<EventRecord> found = session.createSelectionQuery(
                            "from EventRecord e where e.id in (:ids) order by e.id", EventRecord.class)
                    .setParameterList("ids", chunk).setFetchSize(FETCH_ROWS).scroll(ScrollMode.FORWARD_ONLY)) {
                while (found.next()) {
                    if (!rows.isEmpty() && (bytes >= maxBytes || rows.size() >= limit)) {
                        return new Page(rows, lastScanned, true);
                    }
                    EventRecord row = found.get();
                    lastScanned = row.id();
                    if ((fromMillis == null || row.timeStampMillis() >= fromMillis)
                            && (toMillis == null || row.timeStampMillis() <= toMillis)) {
                        rows.add(row);
                        bytes += row.json().length();
                    }
                }
            }
        }
        if (ids.length > 0) {
            lastScanned = ids[ids.length - 1];
        }
        return new Page(rows, lastScanned, idsFull);
    }

    /**
     * The first {@code count} ids after {@code afterId} up to {@code upToId} among the topics, in order: each
     * topic's index walked in its own order, merged.
     */
    private static long[] firstIds(StatelessSession session, long afterId, long upToId, Collection<String> topicKeys,
                                   int count) {
        long[] first = new long[0];
        for (String topicKey : topicKeys) {
            List<Long> ids = session.createSelectionQuery("select e.id from EventRecord e where e.topicKey = :topic"
                            + " and e.id > :after and e.id <= :upTo order by e.topicKey, e.id", Long.class)
                    .setParameter("topic", topicKey).setParameter("after", afterId).setParameter("upTo", upToId)
                    .setMaxResults(count).getResultList();
            first = smallest(first, ids, count);
            if (first.length == count) {
                // Later topics need only ids below the highest kept one.
                upToId = first[count - 1];
            }
        }
        return first;
    }

    private static long[] firstIdsOfAll(StatelessSession session, long afterId, int count) {
        return session.createSelectionQuery("select e.id from EventRecord e where e.id > :after order by e.id",
                        Long.class)
                .setParameter("after", afterId).setMaxResults(count).getResultList()
                .stream().mapToLong(Long::longValue).toArray();
    }

    /** The {@code count} smallest of two ascending lists of distinct ids, ascending. */
    private static long[] smallest(long[] kept, List<Long> more, int count) {
        long[] merged = new long[Math.min(count, kept.length + more.size())];
        int i = 0;
        int j = 0;
        for (int k = 0; k < merged.length; k++) {
            merged[k] = j >= more.size() || i < kept.length && kept[i] < more.get(j) ? kept[i++] : more.get(j++);
        }
        return merged;
    }
}

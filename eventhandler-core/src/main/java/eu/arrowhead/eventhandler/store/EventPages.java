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
 *
 * <p>Damage: ids in a {@link DamagedRanges damaged range} are never read, and a walk of the primary key stops
 * short of one (H2 fails a scan that merely reaches a damaged page). A read that fails on damage not yet known
 * finds it ({@link DamageProbe}) and throws {@link DamagedRangeException}, so that the reader records it and
 * reads again.
 */
final class EventPages {
    /**
     * Rows read by primary key in one statement: the first chunk of a page, then four times as many each time,
     * up to {@link #LOOKUP_CHUNK}. H2 materializes a statement's whole result before the first row is scrolled, with a
     * reference to each row's large value kept for a while after (see {@code EmbeddedH2.LOB_TIMEOUT_MILLIS}); a page
     * of large events holds a few of them, and 256 read to return 3 made a read flood hold a hundred times more.
     */
    private static final int FIRST_LOOKUP_CHUNK = 16;
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
                       int maxEvents, long maxBytes, DamagedRanges damaged) {
        long[] ids = firstIds(session, afterId, upToId, topicKeys, maxEvents);
        return rows(session, afterId, ids, ids.length == maxEvents, maxBytes, null, null, maxEvents, damaged);
    }

    /**
     * A page of {@code mgmt/events}: events after {@code afterId} of the topics (every topic when empty), with a
     * timeStamp in the range. With a time range, at most {@value #SCAN_FACTOR} x {@code limit} events are examined
     * and the page may hold fewer than {@code limit} events, even none, with more to come.
     */
    static Page query(StatelessSession session, Collection<String> topicKeys, Long fromMillis, Long toMillis,
                      long afterId, int limit, long maxBytes, DamagedRanges damaged) {
        boolean timeRange = fromMillis != null || toMillis != null;
        int examined = timeRange ? limit * SCAN_FACTOR : limit;
        long[] ids = topicKeys.isEmpty() ? firstIdsOfAll(session, afterId, examined, damaged)
                : firstIds(session, afterId, Long.MAX_VALUE, topicKeys, examined);
        return rows(session, afterId, ids, ids.length == examined, maxBytes, timeRange ? fromMillis : null,
                timeRange ? toMillis : null, limit, damaged);
    }

    /**
     * Reads the rows of {@code ids} in order, a chunk at a time, until {@code maxBytes} or {@code limit} rows
     * (those outside the time range read and skipped; those in damaged ranges not read).
     */
    private static Page rows(StatelessSession session, long afterId, long[] ids, boolean idsFull, long maxBytes,
                             Long fromMillis, Long toMillis, int limit, DamagedRanges damaged) {
        List<EventRecord> rows = new ArrayList<>();
        long bytes = 0;
        long lastScanned = 0;
        long[] readable = Arrays.stream(ids).filter(id -> !damaged.contains(id)).toArray();
        for (int from = 0, size = FIRST_LOOKUP_CHUNK; from < readable.length;
             from += size, size = Math.min(LOOKUP_CHUNK, size * 4)) {
            List<Long> chunk = Arrays.stream(readable, from, Math.min(readable.length, from + size)).boxed()
                    .toList();
            long readableBelow = from == 0 ? afterId : readable[from - 1];
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
            } catch (RuntimeException e) {
                throw damageIn(session, e, chunk, readableBelow);
            }
        }
        if (ids.length > 0) {
            lastScanned = ids[ids.length - 1];
        }
        return new Page(rows, lastScanned, idsFull);
    }

    /**
     * What a failed read of {@code chunk}'s rows was: the damaged range that holds its first unreadable id, or,
     * if H2's file is not damaged there, the failure itself.
     */
    private static RuntimeException damageIn(StatelessSession session, RuntimeException failure, List<Long> chunk,
                                             long readableBelow) {
        if (!EmbeddedH2.isCorruption(failure)) {
            return failure;
        }
        MissingRanges.Range range = session.doReturningWork(connection -> DamageProbe.on(connection, probe -> {
            long below = readableBelow;
            for (long id : chunk) {
                if (probe.unreadable(id)) {
                    return probe.runAround(id, below);
                }
                below = id;
            }
            return null;
        }));
        return range == null ? failure : new DamagedRangeException(range);
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

    /** The first {@code count} ids after {@code afterId}, walking the primary key around damaged ranges. */
    private static long[] firstIdsOfAll(StatelessSession session, long afterId, int count, DamagedRanges damaged) {
        List<Long> ids = new ArrayList<>();
        long from = afterId + 1;
        while (ids.size() < count && from > 0) {
            if (damaged.contains(from)) {
                from = damaged.lastOf(from) + 1;
                continue;
            }
            long to = damaged.nextAfter(from) - 1;
            int limit = (int) Math.min(count - ids.size(), to - from + 1);
            ids.addAll(walk(session, from, to, limit));
            if (to == Long.MAX_VALUE - 1) {
                break;
            }
            from = to + 1;
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    /**
     * Up to {@code limit} ids in [{@code from}, {@code to}] in order. Stated as {@code id >= from}: H2 starts a
     * scan at the page of its lower bound, and {@code id > from - 1} would start in a damaged page that ends there.
     * A scan that finds fewer ids than its limit reads the page after {@code to}; should that be damaged, the
     * longest limit that stops before it is found by halving.
     */
    private static List<Long> walk(StatelessSession session, long from, long to, int limit) {
        try {
            return scan(session, from, to, limit);
        } catch (RuntimeException e) {
            if (!EmbeddedH2.isCorruption(e)) {
                throw e;
            }
            int good = 0;
            List<Long> found = List.of();
            int bad = limit;
            while (bad - good > 1) {
                int mid = (good + bad) >>> 1;
                try {
                    found = scan(session, from, to, mid);
                    good = mid;
                } catch (RuntimeException again) {
                    bad = mid;
                }
            }
            if (to < Long.MAX_VALUE - 1) {
                return found;
            }
            // No damage known ahead: it starts after what was found.
            long readableBelow = found.isEmpty() ? from - 1 : found.get(found.size() - 1);
            MissingRanges.Range range = session.doReturningWork(connection -> DamageProbe.on(connection, probe -> {
                long first = probe.firstUnreadableFrom(readableBelow + 1);
                return first < 0 ? null : probe.runAround(first, readableBelow);
            }));
            if (range == null) {
                throw e;
            }
            throw new DamagedRangeException(range);
        }
    }

    private static List<Long> scan(StatelessSession session, long from, long to, int limit) {
        if (limit == 0) {
            return List.of();
        }
        return session.createSelectionQuery("select e.id from EventRecord e where e.id >= :from and e.id <= :to"
                        + " order by e.id", Long.class)
                .setParameter("from", from).setParameter("to", to).setMaxResults(limit).getResultList();
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

package eu.arrowhead.eventhandler.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ids whose rows H2 cannot read because its file is damaged (a chunk overwritten, a bad sector): found by
 * {@link DamageProbe} when a read fails on them, or at start for a saved missing range that still cannot be read.
 * Reads step around them instead of failing on them forever, each is also a missing range (so every resume across
 * it gets a replay-gap notice), and while there is one the server's health is DEGRADED: the file needs repair.
 * Kept merged; thread-safe.
 */
final class DamagedRanges {
    private static final Logger LOG = LoggerFactory.getLogger(DamagedRanges.class);

    /** first -> last, disjoint and not adjacent. */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    private final MissingRanges missing;

    DamagedRanges(MissingRanges missing) {
        this.missing = missing;
    }

    /**
     * Records unreadable ids, named in one line the first time (a range already known says nothing again), and as
     * missing, so that resumes are told.
     *
     * @param when what found it, for the line: "a read" or "the start"
     */
    synchronized void found(MissingRanges.Range range, String when) {
        Map.Entry<Long, Long> known = ranges.floorEntry(range.first());
        if (known != null && known.getValue() >= range.last()) {
            return;
        }
        long first = range.first();
        long last = range.last();
        if (known != null && known.getValue() >= first - 1) {
            first = known.getKey();
            last = Math.max(last, known.getValue());
        }
        for (Map.Entry<Long, Long> next = ranges.ceilingEntry(first); next != null && next.getKey() <= last + 1;
             next = ranges.ceilingEntry(first)) {
            last = Math.max(last, next.getValue());
            ranges.remove(next.getKey());
        }
        ranges.put(first, last);
        missing.add(range.first(), range.last());
        LOG.warn("the event log's file is damaged: the events with ids {}-{} cannot be read (found by {}); reads"
                + " skip them and resumes across them are told (replay-gap); restore or rebuild the file to clear"
                + " this", range.first(), range.last(), when);
    }

    synchronized boolean contains(long id) {
        Map.Entry<Long, Long> range = ranges.floorEntry(id);
        return range != null && range.getValue() >= id;
    }

    /** The last id of the damaged range that holds {@code id}, which {@link #contains} it. */
    synchronized long lastOf(long id) {
        return ranges.floorEntry(id).getValue();
    }

    /** The first id of the next damaged range above {@code id}, or {@link Long#MAX_VALUE}. */
    synchronized long nextAfter(long id) {
        Long next = ranges.higherKey(id);
        return next == null ? Long.MAX_VALUE : next;
    }

    /** The ranges as {@code first-last}, for health. */
    synchronized List<String> describe() {
        List<String> list = new ArrayList<>(ranges.size());
        ranges.forEach((first, last) -> list.add(first + "-" + last));
        return list;
    }
}

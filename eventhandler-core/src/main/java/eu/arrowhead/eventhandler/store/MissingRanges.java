package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ids the sequence gave out that the log does not hold, exactly: ranges dropped from the write buffer
 * while the database was down, and the hole a crash leaves. Below them a low watermark: retention deletes
 * whole prefixes of the log, so everything up to it is gone. A resume is told of each range it crosses.
 *
 * <p>A range is saved in the same transaction as the events the writer commits next (or at a clean stop),
 * so that the log and its list of holes never disagree; until then it is <em>unsaved</em>. A crash that
 * loses unsaved ranges leaves a hole that covers them (see {@link DatabaseEventStore#open}).
 *
 * <p>Ranges are kept merged (no two overlap or touch), so there is one per outage or crash, not one per
 * dropped publish. Thread-safe.
 */
final class MissingRanges {
    /** Missing ids {@code first..last}, both included. */
    record Range(long first, long last) {
    }

    /** first -> last, disjoint and not adjacent. */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    /** The merged ranges the database does not have yet, first -> last. */
    private final TreeMap<Long, Long> unsaved = new TreeMap<>();
    private long deletedUpTo;

    MissingRanges(long deletedUpTo, List<Range> saved) {
        this.deletedUpTo = deletedUpTo;
        saved.forEach(range -> ranges.put(range.first(), range.last()));
    }

    /** Records ids {@code first..last} as missing; the range is unsaved until {@link #saved}. */
    synchronized void add(long first, long last) {
        long from = first;
        long to = last;
        Map.Entry<Long, Long> before = ranges.floorEntry(first);
        if (before != null && before.getValue() >= first - 1) {
            from = before.getKey();
            to = Math.max(to, before.getValue());
        }
        for (Map.Entry<Long, Long> next = ranges.ceilingEntry(from); next != null && next.getKey() <= to + 1;
             next = ranges.ceilingEntry(from)) {
            to = Math.max(to, next.getValue());
            ranges.remove(next.getKey());
            unsaved.remove(next.getKey());
        }
        ranges.put(from, to);
        unsaved.put(from, to);
    }

    /** Retention deleted every event up to {@code upToId}: the ranges below it are no longer needed. */
    synchronized void deletedUpTo(long upToId) {
        if (upToId <= deletedUpTo) {
            return;
        }
        deletedUpTo = upToId;
        ranges.values().removeIf(last -> last <= upToId);
        unsaved.values().removeIf(last -> last <= upToId);
    }

    synchronized long deletedUpTo() {
        return deletedUpTo;
    }

    /** The holes above the watermark. */
    synchronized int count() {
        return ranges.size();
    }

    /** The ranges to save with the next transaction. */
    synchronized List<Range> unsaved() {
        List<Range> list = new ArrayList<>(unsaved.size());
        unsaved.forEach((first, last) -> list.add(new Range(first, last)));
        return list;
    }

    /** The ranges {@link #unsaved} returned are committed; one that has grown since stays unsaved. */
    synchronized void saved(List<Range> committed) {
        committed.forEach(range -> unsaved.remove(range.first(), range.last()));
    }

    /**
     * What a resume from {@code afterId} that reads up to {@code upToId} must be told: each hole in
     * ({@code afterId}, {@code upToId}] as a gap clipped to that span, in id order. The watermark counts as a
     * hole from the start of the sequence, merged with a range that touches it.
     */
    synchronized List<ReplayGap> within(long afterId, long upToId) {
        List<ReplayGap> gaps = new ArrayList<>();
        long first = 1;
        long last = deletedUpTo;
        Long from = ranges.floorKey(afterId);
        for (Map.Entry<Long, Long> range : ranges.tailMap(from == null ? Long.MIN_VALUE : from, true).entrySet()) {
            if (range.getKey() > upToId) {
                break;
            }
            if (range.getKey() <= last + 1) {
                last = Math.max(last, range.getValue());
                continue;
            }
            clip(first, last, afterId, upToId, gaps);
            first = range.getKey();
            last = range.getValue();
        }
        clip(first, last, afterId, upToId, gaps);
        return gaps;
    }

    private static void clip(long first, long last, long afterId, long upToId, List<ReplayGap> into) {
        long requestedAfter = Math.max(first - 1, afterId);
        long resumedAfter = Math.min(last, upToId);
        if (resumedAfter > requestedAfter) {
            into.add(new ReplayGap(requestedAfter, resumedAfter));
        }
    }
}

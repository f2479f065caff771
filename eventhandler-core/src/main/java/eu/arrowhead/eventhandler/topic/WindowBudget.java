package eu.arrowhead.eventhandler.topic;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The heap all replay windows may hold together ({@code replay.total-max-bytes}). Each window is bounded on
 * its own ({@code replay.window-events}, {@code replay.window-bytes}), but {@code topic.max-count} windows at
 * that bound are far more than a heap holds, so together they are bounded too.
 *
 * <p>When the windows pass the bound, the largest are cut down to one level, oldest events first
 * ({@link #trim}): a flood on one topic takes from that topic's window, not from quiet ones. A cut window
 * records how far it was cut, so a subscriber resuming from before that is served by the event store, or
 * told of the gap when there is none. A cut goes down to {@link #TRIM_TO_EIGHTHS} of the bound, so that its
 * sort of the windows by size, under the hub's lock, happens once per eighth of the bound published rather
 * than for every event.
 *
 * <p>Not thread-safe: the hub's lock guards it.
 */
final class WindowBudget {
    /** Cut to 7/8 of the bound. */
    private static final int TRIM_TO_EIGHTHS = 7;

    private final long maxBytes;
    private long bytes;
    private long trims;

    WindowBudget(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    void added(long cost) {
        bytes += cost;
    }

    void removed(long cost) {
        bytes -= cost;
    }

    boolean over() {
        return bytes > maxBytes;
    }

    /**
     * Cuts the largest windows to the highest common level at which all windows together hold at most
     * 7/8 of the bound.
     */
    void trim(Collection<TopicBroadcaster> topics) {
        List<ReplayWindow> windows = new ArrayList<>(topics.size());
        for (TopicBroadcaster topic : topics) {
            if (topic.window().heapBytes() > 0) {
                windows.add(topic.window());
            }
        }
        windows.sort((a, b) -> Long.compare(b.heapBytes(), a.heapBytes()));
        long[] largestFirst = new long[windows.size()];
        for (int i = 0; i < largestFirst.length; i++) {
            largestFirst[i] = windows.get(i).heapBytes();
        }
        long level = level(largestFirst, maxBytes / 8 * TRIM_TO_EIGHTHS);
        for (ReplayWindow window : windows) {
            if (window.heapBytes() <= level) {
                break;
            }
            window.trimTo(level);
        }
        trims++;
    }

    /**
     * The level L such that windows of these sizes (largest first), each cut to at most L, hold at most
     * {@code target} together. With the k largest cut to L and the rest whole, the total is
     * k * L + (the rest), so L is found by trying k = 1, 2, ... until the rest and k * (the next size) fit.
     */
    static long level(long[] largestFirst, long target) {
        long rest = 0;
        for (long size : largestFirst) {
            rest += size;
        }
        for (int k = 1; k <= largestFirst.length; k++) {
            rest -= largestFirst[k - 1];
            long next = k < largestFirst.length ? largestFirst[k] : 0;
            if (rest + k * next <= target) {
                return Math.max(next, (target - rest) / k);
            }
        }
        return 0;
    }

    /** Bytes the windows hold now. */
    long bytes() {
        return bytes;
    }

    /** How many times the windows were cut to fit. */
    long trims() {
        return trims;
    }
}

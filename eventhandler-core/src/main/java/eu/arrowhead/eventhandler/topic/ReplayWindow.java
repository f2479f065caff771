package eu.arrowhead.eventhandler.topic;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * A topic's most recent events, bounded by count and by bytes, for subscribers that resume. Not
 * thread-safe: the hub's lock guards it.
 *
 * <p>{@link #startsAfter()} records what has been forgotten: every event of the topic with a greater id is
 * still here. A subscriber resuming from before it is told that it may have missed events.
 */
final class ReplayWindow {
    private final int maxEvents;
    private final long maxBytes;
    private final WindowBudget budget;
    /** Starts with room for one event: most of {@code topic.max-count} topics may never hold more. */
    private final ArrayDeque<PublishedEvent> events = new ArrayDeque<>(1);
    /** Bytes of frames, bounded by {@code replay.window-bytes}. */
    private long bytes;
    /** What the events hold on the heap, charged to the {@link WindowBudget}. */
    private long heapBytes;
    private long startsAfter;

    ReplayWindow(int maxEvents, long maxBytes, WindowBudget budget, long startsAfter) {
        this.maxEvents = maxEvents;
        this.maxBytes = maxBytes;
        this.budget = budget;
        this.startsAfter = startsAfter;
    }

    void add(PublishedEvent event) {
        events.addLast(event);
        bytes += event.frame().length;
        long cost = event.heapBytes();
        heapBytes += cost;
        budget.added(cost);
        while (!events.isEmpty() && (events.size() > maxEvents || bytes > maxBytes)) {
            evictOldest();
        }
    }

    /** Evicts the oldest events until the window holds at most {@code heapLevel} bytes of heap. */
    void trimTo(long heapLevel) {
        while (!events.isEmpty() && heapBytes > heapLevel) {
            evictOldest();
        }
    }

    private void evictOldest() {
        PublishedEvent evicted = events.removeFirst();
        bytes -= evicted.frame().length;
        long cost = evicted.heapBytes();
        heapBytes -= cost;
        budget.removed(cost);
        startsAfter = evicted.id();
    }

    /** Gives the window's heap back to the budget: its topic is removed. */
    void discard() {
        budget.removed(heapBytes);
        heapBytes = 0;
        bytes = 0;
        events.clear();
    }

    long heapBytes() {
        return heapBytes;
    }

    long startsAfter() {
        return startsAfter;
    }

    /** Adds the events with an id above {@code afterId} that pass {@code filter}, oldest first. */
    void collectAfter(long afterId, SubscriberFilter filter, List<PublishedEvent> into) {
        Iterator<PublishedEvent> newestFirst = events.descendingIterator();
        int from = into.size();
        while (newestFirst.hasNext()) {
            PublishedEvent event = newestFirst.next();
            if (event.id() <= afterId) {
                break;
            }
            if (filter.matches(event)) {
                into.add(event);
            }
        }
        Collections.reverse(into.subList(from, into.size()));
    }
}

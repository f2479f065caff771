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
    private final ArrayDeque<PublishedEvent> events = new ArrayDeque<>();
    private long bytes;
    private long startsAfter;

    ReplayWindow(int maxEvents, long maxBytes, long startsAfter) {
        this.maxEvents = maxEvents;
        this.maxBytes = maxBytes;
        this.startsAfter = startsAfter;
    }

    void add(PublishedEvent event) {
        events.addLast(event);
        bytes += event.frame().length;
        while (!events.isEmpty() && (events.size() > maxEvents || bytes > maxBytes)) {
            PublishedEvent evicted = events.removeFirst();
            bytes -= evicted.frame().length;
            startsAfter = evicted.id();
        }
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

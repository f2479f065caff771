package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.net.URI;

/**
 * What a push subscriber receives and where it goes. Replaced as a whole when the subscription changes.
 *
 * @param filter      sources and metadata
 * @param startMillis the earliest timeStamp sent
 * @param endMillis   the latest timeStamp sent
 * @param target      the notify URL
 */
public record PushRules(SubscriberFilter filter, long startMillis, long endMillis, URI target) {

    /** Whether the event's timeStamp lies within the subscription's window. */
    boolean inWindow(long timeStampMillis) {
        return timeStampMillis >= startMillis && timeStampMillis <= endMillis;
    }

    /** Whether the subscriber receives the event: its filter and its time window. */
    public boolean passes(PublishedEvent event) {
        return inWindow(event.timeStampMillis()) && filter.matches(event);
    }
}

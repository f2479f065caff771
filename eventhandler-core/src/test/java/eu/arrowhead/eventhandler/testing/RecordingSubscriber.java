package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Subscriber;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.util.ArrayList;
import java.util.List;

/** A hub subscriber that keeps every event offered to it, in the order offered (under the hub's lock). */
public final class RecordingSubscriber implements Subscriber {
    private final List<PublishedEvent> offered = new ArrayList<>();
    private long hasUpTo;

    @Override
    public SubscriberFilter filter() {
        return SubscriberFilter.NONE;
    }

    @Override
    public synchronized void offer(PublishedEvent event, Publication publication) {
        if (event.id() == 0 || event.id() > hasUpTo) {
            offered.add(event);
        }
    }

    @Override
    public synchronized void hasUpTo(long id) {
        hasUpTo = id;
    }

    public synchronized List<PublishedEvent> offered() {
        return List.copyOf(offered);
    }

    /** The ids offered, in the order offered. */
    public synchronized List<Long> ids() {
        return offered.stream().map(PublishedEvent::id).toList();
    }
}

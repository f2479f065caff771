package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Subscriber;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;

/**
 * What single-node mode's deliveries share as the hub's subscribers ({@link LogCursor}, {@link PushSubscriber}):
 * the subscription's rules, which can change (subscribing again, {@code PUT}, an authorization update) without
 * losing what is held, as they are swapped as a whole; and the start of an offer, which passes on only the events
 * in the subscription's time window, as the body all the event's push subscribers share.
 */
abstract class HubDelivery implements Subscriber, PushDelivery, PushQueue {
    final PushSender sender;
    private volatile PushRules rules;

    HubDelivery(PushSender sender, PushRules rules) {
        this.sender = sender;
        this.rules = rules;
    }

    @Override
    public final void rules(PushRules changed) {
        rules = changed;
    }

    @Override
    public final PushRules rules() {
        return rules;
    }

    @Override
    public final SubscriberFilter filter() {
        return rules.filter();
    }

    @Override
    public final void offer(PublishedEvent event, Publication publication) {
        if (rules.inWindow(event.timeStampMillis())) {
            offer(sender.bodyFor(event), publication);
        }
    }

    /** Takes one of the subscription's events, under the hub's lock: what it wakes waits for the publication. */
    abstract void offer(PushBody body, Publication publication);
}

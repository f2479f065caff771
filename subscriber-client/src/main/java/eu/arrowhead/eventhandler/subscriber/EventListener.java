package eu.arrowhead.eventhandler.subscriber;

import eu.arrowhead.eventhandler.api.Event;

/**
 * Receives the events of an {@link EventSubscriber}.
 *
 * <p>Called on the subscription's own thread, one event at a time, in id order, each event once, even
 * across reconnects. While this method runs the subscription reads nothing from the server: a listener
 * that takes longer than the events arrive makes the server drop the stream (its queue for this
 * subscriber overflows), after which the subscription reconnects and resumes where it was. Hand slow work
 * to another thread.
 *
 * <p>A listener that throws does not end the subscription: the exception is reported to
 * {@link SubscriptionListener#onListenerError}, the event counts as delivered, and the next one follows.
 */
@FunctionalInterface
public interface EventListener {

    /**
     * Handles one event.
     *
     * @param event the event as the server delivered it; never null
     */
    void onEvent(Event event);
}

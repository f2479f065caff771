package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.publisher.EventPublisher;
import eu.arrowhead.eventhandler.publisher.PublishException;
import eu.arrowhead.eventhandler.publisher.RetryPolicy;
import eu.arrowhead.eventhandler.subscriber.EventSubscriber;
import eu.arrowhead.eventhandler.subscriber.SubscriptionListener;
import java.net.URI;
import java.util.concurrent.atomic.AtomicReference;

/** Our own client libraries at both ends, as an application system embeds them. */
final class ClientLibraryEnds implements PublishLoop.Ends {

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        AtomicReference<Throwable> stopped = new AtomicReference<>();
        EventSubscriber subscriber = EventSubscriber.builder(base)
                .eventTypes(PublishLoop.EVENT_TYPE)
                .listener(event -> log.received(event.id(), event.eventType(), event.payload(), System.nanoTime()))
                .subscriptionListener(new SubscriptionListener() {
                    @Override
                    public void onStopped(Throwable cause) {
                        stopped.compareAndSet(null, cause == null ? new IllegalStateException("closed") : cause);
                    }
                })
                .subscribe();
        PublishLoop.Subscription subscription = new PublishLoop.Subscription() {
            @Override
            public void checkAlive() {
                Throwable cause = stopped.get();
                if (cause != null) {
                    throw new BenchException("the subscriber stopped: " + cause.getMessage(), cause);
                }
            }

            @Override
            public void close() {
                subscriber.close();
            }
        };
        try {
            live.require(subscriber::isConnected, subscription::checkAlive);
        } catch (RuntimeException e) {
            subscriber.close();
            throw e;
        }
        return subscription;
    }

    @Override
    public PublishLoop.Publisher publisher(URI base) {
        // No retries: a failure must show in the numbers, not be hidden by a second attempt.
        EventPublisher publisher = EventPublisher.builder(base).retryPolicy(RetryPolicy.NONE).build();
        return new PublishLoop.Publisher() {
            @Override
            public long publish(String eventType, String payload) {
                try {
                    return publisher.publish(EventPublishRequest.of(eventType, payload));
                } catch (PublishException e) {
                    throw new BenchException("publish failed: " + e.getMessage(), e);
                }
            }

            @Override
            public void close() {
                publisher.close();
            }
        };
    }
}

package eu.arrowhead.eventhandler.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The subscribing end of a peer broker: hands each message to the {@link DeliveryLog} and keeps the first
 * failure of the client's delivery thread, which the loop's thread then reports through
 * {@link PublishLoop.Subscription#checkAlive}.
 *
 * <p>The peers give events no ids: the log tells events apart, and checks their order, by the sequence
 * number their payload carries.
 */
final class PeerReceiver {
    private final String peer;
    private final String topicPrefix;
    private final DeliveryLog log;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    /**
     * @param topicPrefix what the loop's topic or subject puts before the event type, which the log checks
     */
    PeerReceiver(String peer, String topicPrefix, DeliveryLog log) {
        this.peer = peer;
        this.topicPrefix = topicPrefix;
        this.log = log;
    }

    /** Records a message, timed first; called on the client's delivery thread, so it never throws. */
    void received(String topic, byte[] body) {
        long nanos = System.nanoTime();
        try {
            String payload = new String(body, StandardCharsets.UTF_8);
            log.received(Sends.NO_ID, topic.substring(topicPrefix.length()), payload, nanos);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    /** Records that the subscriber cannot go on; the first cause is the one reported. */
    void failed(Throwable cause) {
        failure.compareAndSet(null, cause);
    }

    /** The loop's view of this subscriber, closed by {@code close}. */
    PublishLoop.Subscription subscription(Runnable close) {
        return new PublishLoop.Subscription() {
            @Override
            public void checkAlive() {
                Throwable cause = failure.get();
                if (cause != null) {
                    throw new BenchException("the " + peer + " subscriber stopped: " + cause.getMessage(), cause);
                }
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }
}

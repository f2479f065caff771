package eu.arrowhead.eventhandler.cluster;

import io.nats.client.Connection;
import io.nats.client.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acknowledges a push cursor's event until the cursor's leader confirms it. A plain acknowledgement is one message
 * without an answer: sent while the cursor's leader dies, or while it has none, it is lost, and the cursor holds
 * the event as in flight until its acknowledgement wait (20 s by default) has passed, then sends it again: the
 * subscriber waited that long and got the event twice. Here each acknowledgement asks for JetStream's answer and
 * is sent again every {@link #AGAIN} until it comes, for up to twice the acknowledgement wait: an election that
 * outlasts the wait leaves the new leader to send the event again, unless this acknowledgement reaches it first.
 */
final class ConfirmedAck {
    private static final Logger LOG = LoggerFactory.getLogger(ConfirmedAck.class);
    private static final byte[] ACK = "+ACK".getBytes(StandardCharsets.US_ASCII);
    private static final Duration AGAIN = Duration.ofMillis(250);
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(1);

    private final Connection nats;
    private final Duration patience;

    /** @param ackWait the cursor's acknowledgement wait */
    ConfirmedAck(Connection nats, Duration ackWait) {
        this.nats = nats;
        this.patience = ackWait.multipliedBy(2);
    }

    /**
     * Acknowledges the message whose reply subject is {@code replyTo}; returns at once, the confirmation comes later
     * or never.
     */
    void ack(String replyTo) {
        send(replyTo, System.nanoTime() + patience.toNanos(), 1);
    }

    private void send(String replyTo, long deadlineNanos, int attempt) {
        CompletableFuture<Message> answer;
        try {
            answer = nats.requestWithTimeout(replyTo, ACK, ANSWER_WITHIN);
        } catch (IllegalStateException closed) {
            return; // the node is closing: the stream gives the event to another node
        }
        answer.whenComplete((reply, failed) -> {
            if (failed == null && reply != null && !reply.isStatusMessage()) {
                return;
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                LOG.debug("acknowledgement {} not confirmed after {} attempts; the stream sends the event again",
                        replyTo, attempt);
                return;
            }
            CompletableFuture.delayedExecutor(AGAIN.toMillis(), TimeUnit.MILLISECONDS)
                    .execute(() -> send(replyTo, deadlineNanos, attempt + 1));
        });
    }
}

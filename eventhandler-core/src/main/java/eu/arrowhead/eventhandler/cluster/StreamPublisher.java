package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.PublishOptions;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.support.Status;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Cluster mode's publish: appends a request's events to the stream and answers with the sequences the stream
 * gave them, once it has them with its replicas.
 *
 * <p>All events of a request are sent before the first acknowledgement is awaited, so a batch costs one round
 * trip, not one per event. The stream's leader stores them in the order sent; events from other nodes may lie
 * between them. A batch is not atomic: should the stream fail half-way, the events acknowledged so far are
 * stored, and the publisher's retry (with its {@code Idempotency-Key}) stores the rest and gets all ids.
 *
 * <p>An {@code Idempotency-Key} becomes each event's {@code Nats-Msg-Id} (caller, key and the event's place in
 * the request): within {@code cluster.duplicate-window-seconds} the stream stores none of them again and
 * acknowledges each with the first one's sequence, whichever node the repeat reaches. The request's fingerprint
 * travels with the first; a repeat whose fingerprint differs is another request under the same key, and gets
 * 422 as in single-node mode.
 *
 * <p>While JetStream elects a new leader for the stream (its leader's server died or was cut off), nothing
 * answers the stream's subjects and a publish is refused at once with "no responders". Such an event was not
 * stored, so it is sent again, after a short pause, until the stream answers or {@code cluster.timeout-seconds}
 * have passed since the request began: an election of a few seconds delays publishes instead of refusing them.
 * An acknowledgement that times out is not sent again, since the event may be stored. Should the leader appear
 * between two events of one request, an event sent again is stored after the later ones that found the new leader
 * first: a request split by an election keeps all its ids, not always their order.
 */
final class StreamPublisher {
    /** Elections took 1-10 s in the failover tests: pauses short against that, doubling up to half a second. */
    private static final long FIRST_ELECTION_PAUSE_MILLIS = 25;
    private static final long MAX_ELECTION_PAUSE_MILLIS = 500;
    private final ClusterConnection connection;
    private final JetStream jetStream;
    private final JetStreamManagement management;
    private final StreamMessages messages;
    private final String stream;
    private final PublishOptions options;
    private final Duration timeout;
    private final Duration duplicateWindow;

    StreamPublisher(ClusterConnection connection, StreamMessages messages, String stream, Duration timeout,
                    Duration duplicateWindow) throws IOException {
        this.connection = connection;
        this.jetStream = connection.jetStream(timeout);
        this.management = connection.management(timeout);
        this.messages = messages;
        this.stream = stream;
        this.options = PublishOptions.builder().expectedStream(stream).build();
        this.timeout = timeout;
        this.duplicateWindow = duplicateWindow;
    }

    /**
     * Appends the events, in order, and waits until the stream has them (with its replicas).
     *
     * @return the events' ids, in order (increasing, not always consecutive: other nodes' events may lie between)
     * @throws UnavailableException if the stream cannot take them now (503)
     * @throws eu.arrowhead.eventhandler.protocol.RequestException 422 if the key named another request
     */
    long[] append(List<IncomingEvent> events, PublishKey key) {
        if (!connection.isUp()) {
            throw new UnavailableException(connection.cutOffReason() + "; publish to another node");
        }
        String idempotencyKey = key.key();
        long fingerprint = key.fingerprint();
        String messageId = idempotencyKey == null ? null
                : key.scope().length() + ":" + key.scope() + ":" + idempotencyKey + ":";
        long deadline = System.nanoTime() + timeout.toNanos();
        List<CompletableFuture<PublishAck>> acks = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            acks.add(send(events.get(i), messageId, i, fingerprint));
        }
        long[] ids = new long[events.size()];
        boolean repeat = false;
        for (int i = 0; i < ids.length; i++) {
            PublishAck ack = awaitStored(acks.get(i), events.get(i), messageId, i, fingerprint, deadline);
            ids[i] = ack.getSeqno();
            repeat |= ack.isDuplicate();
        }
        if (repeat) {
            requireSameRequest(ids[0], idempotencyKey, fingerprint);
        }
        return ids;
    }

    private CompletableFuture<PublishAck> send(IncomingEvent event, String messageId, int index, long fingerprint) {
        return jetStream.publishAsync(messages.encode(event, messageId == null ? null : messageId + index, fingerprint),
                options);
    }

    /** The event's acknowledgement; sent again while the stream has no leader, until the deadline. */
    private PublishAck awaitStored(CompletableFuture<PublishAck> ack, IncomingEvent event, String messageId, int index,
                                   long fingerprint, long deadline) {
        long pauseMillis = FIRST_ELECTION_PAUSE_MILLIS;
        while (true) {
            try {
                return await(ack, deadline);
            } catch (NoLeaderException e) {
                long left = deadline - System.nanoTime();
                if (left <= TimeUnit.MILLISECONDS.toNanos(pauseMillis)) {
                    throw new UnavailableException("the cluster's stream has had no leader for "
                            + timeout.toSeconds() + " s (cluster.timeout-seconds): event " + (index + 1) + " of the"
                            + " request was not stored (any before it were); publish again later with the same"
                            + " Idempotency-Key");
                }
                try {
                    Thread.sleep(pauseMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new UnavailableException("the Event Handler is shutting down");
                }
                pauseMillis = Math.min(MAX_ELECTION_PAUSE_MILLIS, pauseMillis * 2);
                ack = send(event, messageId, index, fingerprint);
            }
        }
    }

    private PublishAck await(CompletableFuture<PublishAck> ack, long deadline) {
        try {
            return ack.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new UnavailableException("the cluster's stream did not acknowledge the event within "
                    + timeout.toSeconds() + " s (cluster.timeout-seconds); it may still be stored: retry with the"
                    + " same Idempotency-Key to learn its id without publishing it twice");
        } catch (CancellationException e) {
            // jnats cancels a request it has given up on after its own timeout: the same as ours.
            throw new UnavailableException("the cluster's stream did not acknowledge the event within "
                    + timeout.toSeconds() + " s (cluster.timeout-seconds); it may still be stored: retry with the"
                    + " same Idempotency-Key to learn its id without publishing it twice");
        } catch (ExecutionException e) {
            if (noLeader(e.getCause())) {
                throw new NoLeaderException();
            }
            throw new UnavailableException("the cluster's stream refused the event: " + describe(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("the Event Handler is shutting down");
        }
    }

    /** A repeat of a keyed request: the stored first event must carry this request's fingerprint. */
    private void requireSameRequest(long firstId, String idempotencyKey, long fingerprint) {
        MessageInfo first;
        try {
            first = management.getMessage(stream, firstId);
        } catch (IOException | JetStreamApiException e) {
            throw new UnavailableException("the cluster's stream could not be asked about an earlier request"
                    + " with the same Idempotency-Key: " + describe(e));
        }
        String stored = first.getHeaders() == null ? null : first.getHeaders().getFirst(StreamMessages.FINGERPRINT);
        if (stored != null && !stored.equals(Long.toHexString(fingerprint))) {
            throw IdempotencyKeys.usedForAnotherRequest(idempotencyKey, duplicateWindow);
        }
    }

    /**
     * Whether nothing answered the stream's subject: the request reached no stream, so the event is not stored.
     * jnats reports it as an {@link IOException} carrying the 503 status line, wrapped once or twice.
     */
    private static boolean noLeader(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause.getMessage() != null && cause.getMessage().contains(Status.NO_RESPONDERS_TEXT)) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** A publish that reached no stream: safe to send again. */
    private static final class NoLeaderException extends RuntimeException {
        NoLeaderException() {
            super(null, null, false, false);
        }
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}

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
import java.util.Set;
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
 * <p>While JetStream elects a new leader for the stream (its leader's server died or was cut off), a publish finds
 * no stream: nothing answers the stream's subjects ("no responders"), a server says the stream's group has no
 * leader, or, when the leader's server was frozen or the connection to our server was lost, no answer comes at
 * all. A publish waits for the new leader, up to {@code cluster.timeout-seconds} since the request began, and is
 * then answered with its ids: an election of a few seconds delays publishes instead of refusing them. An event
 * that reached no stream is sent again after a short pause. An event whose acknowledgement is overdue may be
 * stored, so it is sent again only with its message id (a keyed request, as the client libraries send them):
 * within the duplicate window the stream stores it once and answers every repeat with the first one's id. An
 * unkeyed event waits for its first acknowledgement. Past the deadline the publish is refused (503 with
 * {@code Retry-After}). Should the leader appear between two events of one request, an event sent again is stored
 * after the later ones that found the new leader first: a request split by an election keeps all its ids, not
 * always their order.
 */
final class StreamPublisher {
    /** Elections took 1-10 s in the failover tests: pauses short against that, doubling up to half a second. */
    private static final long FIRST_ELECTION_PAUSE_MILLIS = 25;
    private static final long MAX_ELECTION_PAUSE_MILLIS = 500;
    /**
     * How long a keyed event's acknowledgement is awaited before the event is sent again. A request sent to a
     * server that then died, or to a leader that was frozen, is never answered; sent again, it reaches the new
     * leader as soon as there is one. Long against an acknowledgement under load (milliseconds), short against
     * {@code cluster.timeout-seconds}.
     */
    private static final Duration ACK_WAIT = Duration.ofSeconds(1);
    /** JetStream's "temporarily unavailable" (10008) and "cluster can not handle request" (10009). */
    private static final Set<Integer> LEADERLESS_API_ERRORS = Set.of(10008, 10009);
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
        ClusterConnection.CutOff cutOff = connection.cutOff();
        if (cutOff != null) {
            throw new UnavailableException("this node " + cutOff.why() + "; publish to another node");
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
        try {
            return jetStream.publishAsync(messages.encode(event, messageId == null ? null : messageId + index,
                    fingerprint), options);
        } catch (IllegalStateException e) {
            // jnats' connection is closed or its reconnect buffer is full: nothing was sent.
            return CompletableFuture.failedFuture(new NotSentException(e));
        }
    }

    /**
     * The event's acknowledgement; the event is sent again, until the deadline, while the stream has no leader
     * (the event was not stored: after a pause) and, for a keyed event, while its acknowledgement is overdue (the
     * event may be stored: at once, and the stream's duplicate window answers a repeat with the first one's id).
     */
    private PublishAck awaitStored(CompletableFuture<PublishAck> ack, IncomingEvent event, String messageId, int index,
                                   long fingerprint, long deadline) {
        long pauseMillis = FIRST_ELECTION_PAUSE_MILLIS;
        // Without a message id a repeat would be stored twice: such an event waits for its first acknowledgement.
        long ackWaitNanos = messageId == null ? Long.MAX_VALUE : ACK_WAIT.toNanos();
        while (true) {
            Attempt outcome;
            try {
                return await(ack, Math.min(deadline, System.nanoTime() + Math.min(ackWaitNanos, timeout.toNanos())));
            } catch (NotStoredException e) {
                outcome = Attempt.NOT_STORED;
            } catch (UnansweredException e) {
                outcome = Attempt.UNANSWERED;
            }
            long left = deadline - System.nanoTime();
            long pauseNanos = outcome == Attempt.NOT_STORED ? TimeUnit.MILLISECONDS.toNanos(pauseMillis) : 0;
            if (left <= pauseNanos || outcome == Attempt.UNANSWERED && messageId == null) {
                throw outcome == Attempt.NOT_STORED ? new UnavailableException("the cluster's stream has had no"
                        + " leader for " + timeout.toSeconds() + " s (cluster.timeout-seconds): event " + (index + 1)
                        + " of the request was not stored (any before it were); publish again later with the same"
                        + " Idempotency-Key") : unanswered();
            }
            if (outcome == Attempt.NOT_STORED) {
                pause(pauseMillis);
                pauseMillis = Math.min(MAX_ELECTION_PAUSE_MILLIS, pauseMillis * 2);
            }
            ack = send(event, messageId, index, fingerprint);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("the Event Handler is shutting down");
        }
    }

    /**
     * The acknowledgement, waited for until {@code until} ({@link System#nanoTime}).
     *
     * @throws NotStoredException  if the stream has no leader now: the event was not stored
     * @throws UnansweredException if no acknowledgement came in time: the event may be stored
     */
    private PublishAck await(CompletableFuture<PublishAck> ack, long until) {
        try {
            return ack.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | CancellationException e) {
            // jnats cancels a request it has given up on after its own timeout, or at a lost connection.
            ack.cancel(false);
            throw new UnansweredException();
        } catch (ExecutionException e) {
            switch (classify(e.getCause())) {
                case NOT_STORED -> throw new NotStoredException();
                case UNANSWERED -> throw new UnansweredException();
                default -> throw new UnavailableException("the cluster's stream refused the event: "
                        + describe(e.getCause()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("the Event Handler is shutting down");
        }
    }

    private UnavailableException unanswered() {
        return new UnavailableException("the cluster's stream did not acknowledge the event within "
                + timeout.toSeconds() + " s (cluster.timeout-seconds); it may still be stored: retry with the"
                + " same Idempotency-Key to learn its id without publishing it twice");
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
     * What a failed acknowledgement says about the event. Nothing answered the stream's subject (jnats: an
     * {@link IOException} carrying the 503 status line, wrapped once or twice), or the server answered that the
     * stream's group has no leader now: the event reached no stream and is not stored. jnats cancelled the request
     * (its own timeout, or the connection to its server was lost): the event may be stored.
     */
    private static Attempt classify(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof CancellationException) {
                return Attempt.UNANSWERED;
            }
            if (cause instanceof NotSentException || cause instanceof JetStreamApiException api
                    && LEADERLESS_API_ERRORS.contains(api.getApiErrorCode())
                    || cause.getMessage() != null && cause.getMessage().contains(Status.NO_RESPONDERS_TEXT)) {
                return Attempt.NOT_STORED;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return Attempt.REFUSED;
    }

    /** How an attempt to store an event failed. */
    private enum Attempt {
        /** It reached no stream: safe to send again. */
        NOT_STORED,
        /** No acknowledgement came: it may be stored; safe to send again only with its message id. */
        UNANSWERED,
        /** The stream refused it for good. */
        REFUSED
    }

    private static final class NotStoredException extends RuntimeException {
        NotStoredException() {
            super(null, null, false, false);
        }
    }

    /** jnats would not send the event. */
    private static final class NotSentException extends RuntimeException {
        NotSentException(IllegalStateException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    private static final class UnansweredException extends RuntimeException {
        UnansweredException() {
            super(null, null, false, false);
        }
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.support.NatsJetStreamConstants;
import io.nats.client.support.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

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
 *
 * <p>No thread waits for any of this ({@link StreamAppend}): the acknowledgements arrive on jnats' thread, the
 * pauses and overdue acknowledgements are timed on the publisher's clock, and the answer is a future. A node's
 * workers serve other requests meanwhile, also while an election holds every publish for seconds.
 */
final class StreamPublisher implements AutoCloseable {
    /**
     * How long a keyed event's acknowledgement is awaited before the event is sent again. A request sent to a
     * server that then died, or to a leader that was frozen, is never answered; sent again, it reaches the new
     * leader as soon as there is one. Long against an acknowledgement under load (milliseconds), short against
     * {@code cluster.timeout-seconds}.
     */
    static final Duration ACK_WAIT = Duration.ofSeconds(1);
    /** The shortest wait for a repeat's fingerprint, for one that comes at its request's deadline. */
    private static final Duration MIN_QUESTION_WAIT = Duration.ofMillis(500);
    /** JetStream's "temporarily unavailable" (10008) and "cluster can not handle request" (10009). */
    private static final Set<Integer> LEADERLESS_API_ERRORS = Set.of(10008, 10009);
    /** JetStream's "duplicate message id is in process" (10158; servers from 2.10): a write not yet committed. */
    private static final int STAGED_MESSAGE_ID = 10158;
    private final ClusterConnection connection;
    private final JetStream jetStream;
    private final StreamMessages messages;
    private final String stream;
    private final PublishOptions options;
    private final Duration timeout;
    private final Duration duplicateWindow;
    /**
     * Times the appends' pauses, overdue acknowledgements and deadlines, and sends their events again: the thread
     * never waits on NATS (a send only queues the message for jnats' writer), so one serves every append.
     */
    private final ScheduledThreadPoolExecutor clock;
    private final PendingAcks pendingAcks;

    StreamPublisher(ClusterConnection connection, StreamMessages messages, String stream, Duration timeout,
                    Duration duplicateWindow, int maxPendingAcks) throws IOException {
        this.connection = connection;
        this.jetStream = connection.jetStream(timeout);
        this.messages = messages;
        this.stream = stream;
        this.options = PublishOptions.builder().expectedStream(stream).build();
        this.timeout = timeout;
        this.duplicateWindow = duplicateWindow;
        this.clock = new ScheduledThreadPoolExecutor(1, NamedThreads.daemons("eh-cluster-publish"));
        this.pendingAcks = new PendingAcks(maxPendingAcks, clock);
        // Every append schedules its deadline and almost all end long before it: a cancelled step must leave the
        // queue at once, or it would hold its append's events until the deadline.
        clock.setRemoveOnCancelPolicy(true);
    }

    /** One request's events and what makes each one's message id. */
    record Request(List<IncomingEvent> events, String messageId, long fingerprint) {
        /** Whether its events carry message ids: the stream then stores a repeat once. */
        boolean keyed() {
            return messageId != null;
        }
    }

    /**
     * Appends the events, in order, and answers once the stream has them (with its replicas).
     *
     * @return the events' ids, in order (increasing, not always consecutive: other nodes' events may lie
     *         between); it fails with {@link UnavailableException} if the stream cannot take them now (503), with
     *         a {@link eu.arrowhead.eventhandler.protocol.RequestException} (422) if the key named another request
     * @throws UnavailableException if this node is cut off from NATS
     */
    CompletableFuture<long[]> append(List<IncomingEvent> events, PublishKey key) {
        ClusterConnection.CutOff cutOff = connection.cutOff();
        if (cutOff != null) {
            throw new UnavailableException("this node " + cutOff.why() + "; publish to another node");
        }
        String messageId = key.key() == null ? null
                : key.scope().length() + ":" + key.scope() + ":" + key.key() + ":";
        Request request = new Request(events, messageId, key.fingerprint());
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletableFuture<StreamAppend.Stored> stored = new StreamAppend(this, pendingAcks, clock, request,
                deadline).start();
        return stored.thenCompose(appended -> appended.repeat() ? sameRequest(appended.ids(), key, deadline)
                : CompletableFuture.completedFuture(appended.ids()));
    }

    /** Sends event {@code index} of the request; nothing waits for its acknowledgement here. */
    CompletableFuture<PublishAck> send(Request request, int index) {
        try {
            return jetStream.publishAsync(messages.encode(request.events().get(index),
                    request.keyed() ? request.messageId() + index : null, request.fingerprint()), options);
        } catch (IllegalStateException e) {
            // jnats' connection is closed or its reconnect buffer is full: nothing was sent.
            return CompletableFuture.failedFuture(new NotSentException(e));
        }
    }

    UnavailableException noRoom(int count) {
        return new UnavailableException("this node found no room within " + timeout.toSeconds() + " s"
                + " (cluster.timeout-seconds) for this publish's " + count + " events among the acknowledgements it"
                + " awaits from the cluster's stream (" + pendingAcks.taken() + " of at most " + pendingAcks.limit()
                + ", cluster.max-pending-acks; events it took earlier come first): the stream answers slowly or"
                + " elects a leader; publish again shortly, or to another node");
    }

    /** Acknowledgements this node awaits from the stream now. */
    int pendingAcks() {
        return pendingAcks.taken();
    }

    UnavailableException leaderless(int stored, int count) {
        return new UnavailableException("the cluster's stream has had no leader for " + timeout.toSeconds()
                + " s (cluster.timeout-seconds): " + (count - stored) + " of the request's " + count + " events"
                + " were not stored; publish again later with the same Idempotency-Key");
    }

    UnavailableException unanswered() {
        return new UnavailableException("the cluster's stream did not acknowledge the event within "
                + timeout.toSeconds() + " s (cluster.timeout-seconds); it may still be stored: retry with the"
                + " same Idempotency-Key to learn its id without publishing it twice");
    }

    /**
     * A repeat of a keyed request: the stored first event must carry this request's fingerprint. Asked of the
     * stream, as JetStream's own message lookup asks, without a thread waiting for the answer, within what is
     * left of the request's deadline. The question comes right after the acknowledgements, when a stream that has
     * just elected a leader may still answer that it is not ready (10008): it is asked again after a pause, as an
     * event is sent again.
     */
    private CompletableFuture<long[]> sameRequest(long[] ids, PublishKey key, long deadline) {
        CompletableFuture<long[]> answer = new CompletableFuture<>();
        askFingerprint(ids, key, deadline, 1, answer);
        return answer;
    }

    private void askFingerprint(long[] ids, PublishKey key, long deadline, int attempt,
                                CompletableFuture<long[]> answer) {
        byte[] question = ("{\"seq\":" + ids[0] + "}").getBytes(StandardCharsets.US_ASCII);
        Duration left = Duration.ofNanos(Math.max(MIN_QUESTION_WAIT.toNanos(), deadline - System.nanoTime()));
        CompletableFuture<Message> answered;
        try {
            answered = connection.nats().requestWithTimeout(NatsJetStreamConstants.DEFAULT_API_PREFIX
                    + String.format(NatsJetStreamConstants.JSAPI_MSG_GET, stream), question, left);
        } catch (IllegalStateException e) {
            // jnats' connection is closed or its outgoing queue is full: nothing was asked.
            answered = CompletableFuture.failedFuture(new NotSentException(e));
        }
        answered.whenComplete((message, failure) -> {
            MessageInfo first = failure == null ? new MessageInfo(message, stream, false) : null;
            Throwable unanswered = first == null ? failure : errorOf(first);
            if (unanswered == null) {
                completeWithIds(answer, first, ids, key);
            } else {
                askAgainOrFail(unanswered, ids, key, deadline, attempt, answer);
            }
        });
    }

    /** The question found no stream ready: asked again after a pause, if the deadline leaves room for it. */
    private void askAgainOrFail(Throwable unanswered, long[] ids, PublishKey key, long deadline, int attempt,
                                CompletableFuture<long[]> answer) {
        long pause = StreamAppend.pauseBefore(attempt);
        Attempt why = classify(unanswered);
        if (why != Attempt.NOT_STORED || deadline - System.nanoTime() - pause <= 0) {
            answer.completeExceptionally(new UnavailableException("the cluster's stream could not be asked about an"
                    + " earlier request with the same Idempotency-Key: "
                    + (why == Attempt.UNANSWERED ? "no answer" : describe(unanswered))));
            return;
        }
        try {
            clock.schedule(() -> askFingerprint(ids, key, deadline, attempt + 1, answer), pause, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            answer.completeExceptionally(new UnavailableException("the Event Handler is shutting down; publish again"
                    + " with the same Idempotency-Key"));
        }
    }

    /** The stream's refusal to look the message up, or {@code null} if it answered with it. */
    private static Throwable errorOf(MessageInfo first) {
        try {
            first.throwOnHasError();
            return null;
        } catch (JetStreamApiException e) {
            return e;
        }
    }

    /** The repeat's ids, if the stream's answer shows its first event under this request's fingerprint. */
    private void completeWithIds(CompletableFuture<long[]> answer, MessageInfo first, long[] ids, PublishKey key) {
        String stored = first.getHeaders() == null ? null : first.getHeaders().getFirst(StreamMessages.FINGERPRINT);
        if (stored != null && !stored.equals(Long.toHexString(key.fingerprint()))) {
            answer.completeExceptionally(IdempotencyKeys.usedForAnotherRequest(key.key(), duplicateWindow));
        } else {
            answer.complete(ids);
        }
    }

    /**
     * What a failed acknowledgement says about the event. Nothing answered the stream's subject (jnats: an
     * {@link IOException} carrying the 503 status line, wrapped once or twice), or the server answered that the
     * stream's group has no leader now: the event reached no stream and is not stored. jnats cancelled the request
     * (its own timeout, or the connection to its server was lost): the event may be stored.
     */
    static Attempt classify(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof CancellationException) {
                return Attempt.UNANSWERED;
            }
            if (cause instanceof JetStreamApiException api && api.getApiErrorCode() == STAGED_MESSAGE_ID) {
                return Attempt.IN_FLIGHT;
            }
            if (cause instanceof NotSentException || cause instanceof JetStreamApiException api
                    && (LEADERLESS_API_ERRORS.contains(api.getApiErrorCode()) || isNotLeader(api))
                    || cause.getMessage() != null && cause.getMessage().contains(Status.NO_RESPONDERS_TEXT)) {
                return Attempt.NOT_STORED;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return Attempt.REFUSED;
    }

    /** A server that stopped leading the stream between taking the event and proposing it: it was not stored. */
    private static boolean isNotLeader(JetStreamApiException api) {
        return api.getApiErrorCode() == 0 && api.getErrorCode() == 503
                && "raft: not leader".equals(api.getErrorDescription());
    }

    /** How an attempt to store an event failed. */
    enum Attempt {
        /** It reached no stream: safe to send again. */
        NOT_STORED,
        /** The stream holds its message id for a write not yet committed: its acknowledgement may still come. */
        IN_FLIGHT,
        /** No acknowledgement came: it may be stored; safe to send again only with its message id. */
        UNANSWERED,
        /** The stream refused it for good. */
        REFUSED
    }

    /** jnats would not send the event. */
    private static final class NotSentException extends RuntimeException {
        NotSentException(IllegalStateException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * Stops the clock for new appends. Those still waiting go on with the steps already scheduled (within the
     * acknowledgement wait, or at their deadline), and each one's next step fails it with 503: no append is left
     * without an end.
     */
    @Override
    public void close() {
        clock.shutdown();
    }
}

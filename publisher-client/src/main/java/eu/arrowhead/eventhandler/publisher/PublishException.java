package eu.arrowhead.eventhandler.publisher;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import java.time.Duration;
import java.util.Optional;

/**
 * A publish that did not succeed: the server refused it, or no answer came back. Thrown by
 * {@link EventPublisher#publish publish} and {@link EventPublisher#publishBatch publishBatch}, and the
 * cause of a failed {@link EventPublisher#publishAsync publishAsync} future. It is thrown once the
 * publisher's {@link RetryPolicy} has given up, so it describes the last attempt.
 *
 * <p>The message says what happened, for a log or a person, for example
 * {@code publish refused with 400: eventType may contain only letters, digits and ._-:/}. To act on the
 * failure, use {@link #kind()}, {@link #statusCode()}, {@link #errorMessage()}, {@link #retryable()} and
 * {@link #idempotencyKey()}:
 *
 * <pre>{@code
 * try {
 *     publisher.publish(event);
 * } catch (PublishException e) {
 *     if (e.kind() == PublishException.Kind.OUTCOME_UNKNOWN) {
 *         // sent, but no answer came: later, publisher.publish(event, e.idempotencyKey().orElseThrow())
 *         // returns its id if the server had it, and publishes it (once) if not
 *     } else if (e.statusCode() == 400) {
 *         // a bug in the event: fix it, do not send it again
 *     } else if (e.retryable()) {
 *         // the server was unreachable or busy, and did not take the event: try later, or keep it
 *     }
 * }
 * }</pre>
 */
public final class PublishException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * What kind of failure this is, above all whether the event may have been published. One vocabulary for
     * every failure of a publish; the server's own categories are in {@link #errorMessage()}.
     */
    public enum Kind {
        /**
         * The server answered with a status other than success ({@link #statusCode()}, and
         * {@link #errorMessage()} when it sent one, say which and why): the request was not published.
         * Retryable for {@code 503}.
         */
        REFUSED,
        /**
         * Nothing was sent, so nothing was published: no connection could be opened (refused, timed out, unknown
         * host), or a queued {@link EventPublisher#publishAsync publishAsync} event's deadline passed, or the
         * publisher was closed, before its turn came.
         */
        NOT_SENT,
        /**
         * The request was sent, or may have been, and no complete answer came back before the publisher gave up:
         * it may or may not have been published. {@link #idempotencyKey()} names it: publishing the same event
         * again with that key (within the server's {@code Idempotency-Key} window, 120 s by default) returns its
         * id if it was published, and publishes it if it was not, never twice.
         */
        OUTCOME_UNKNOWN,
        /** A success status whose body was not the expected answer: most likely published, under unknown ids. */
        UNREADABLE_ANSWER,
        /**
         * {@link EventPublisher#publishAsync publishAsync} refused the event at once: its queue holds
         * {@link EventPublisher.Builder#maxQueuedBytes maxQueuedBytes} already. Nothing was sent.
         */
        QUEUE_FULL,
        /**
         * A failure on this side that trying again would not mend (an event that cannot be encoded, a TLS
         * handshake, a call on a closed publisher, an interrupt): nothing was published, unless an earlier attempt's
         * outcome is unknown (then the kind is {@link #OUTCOME_UNKNOWN}).
         */
        FAILED
    }

    private final Kind kind;
    /** The HTTP status of the answer, 0 when there was none. */
    private final int statusCode;
    private final transient ErrorMessage errorMessage;
    /** Whether the failure is of a kind that the retry policy retries. */
    private final boolean retryable;
    private final transient Duration retryAfter;
    /** The publish's {@code Idempotency-Key}, or null before it has one. */
    private final String idempotencyKey;

    private PublishException(Kind kind, String message, Throwable cause, int statusCode, ErrorMessage errorMessage,
                             boolean retryable, Duration retryAfter, String idempotencyKey) {
        super(message, cause);
        this.kind = kind;
        this.statusCode = statusCode;
        this.errorMessage = errorMessage;
        this.retryable = retryable;
        this.retryAfter = retryAfter;
        this.idempotencyKey = idempotencyKey;
    }

    private PublishException(Kind kind, String message, Throwable cause, boolean retryable) {
        this(kind, message, cause, 0, null, retryable, null, null);
    }

    /**
     * The server answered with a status other than success.
     *
     * @param errorMessage the server's Arrowhead error, or null when the body was not one
     * @param retryAfter   the answer's {@code Retry-After}, or null
     */
    static PublishException refused(String what, int statusCode, String detail, ErrorMessage errorMessage,
                                    Duration retryAfter) {
        return new PublishException(Kind.REFUSED,
                what + " refused with " + statusCode + (detail.isEmpty() ? "" : ": " + detail),
                null, statusCode, errorMessage, statusCode == 503, retryAfter, null);
    }

    /** Nothing was sent (no connection could be opened): retried by the policy. */
    static PublishException notSent(String message, Throwable cause) {
        return new PublishException(Kind.NOT_SENT, message, cause, true);
    }

    /** The request was sent and no complete answer came back: an I/O failure, retried by the policy. */
    static PublishException noAnswer(String message, Throwable cause) {
        return new PublishException(Kind.OUTCOME_UNKNOWN, message, cause, true);
    }

    /** A failure that trying again would not mend, with no HTTP answer behind it. */
    static PublishException failed(String message, Throwable cause) {
        return new PublishException(Kind.FAILED, message, cause, false);
    }

    /** A success status whose body could not be read as the expected answer. */
    static PublishException unreadableAnswer(String what, int statusCode, Throwable cause) {
        return new PublishException(Kind.UNREADABLE_ANSWER, what + " answered " + statusCode + " with a body that"
                + " is not the expected answer: " + cause.getMessage(), cause, statusCode, null, false, null, null);
    }

    /** {@code publishAsync}'s queue had no room for the event. */
    static PublishException queueFull(String message) {
        return new PublishException(Kind.QUEUE_FULL, message, null, true);
    }

    /**
     * This failure as the end of a publish with key {@code key}: after {@code attempts} attempts (the earlier
     * ones known only through the message), and {@link Kind#OUTCOME_UNKNOWN} if one of them may have been
     * published.
     *
     * @param why why the publisher gave up now, for the message; empty when this failure is final in itself
     */
    PublishException givenUp(String key, int attempts, boolean mayHaveBeenPublished, String why) {
        boolean unknown = mayHaveBeenPublished && kind != Kind.OUTCOME_UNKNOWN;
        String message = getMessage()
                + (attempts > 1 || !why.isEmpty() ? " (gave up after " + attempts
                        + (attempts == 1 ? " attempt" : " attempts") + why + ")" : "")
                + (unknown ? "; an earlier attempt was sent and not answered, so the event may have been published"
                        : "");
        PublishException last = new PublishException(unknown ? Kind.OUTCOME_UNKNOWN : kind, message, getCause(),
                statusCode, errorMessage, retryable, retryAfter, key);
        last.setStackTrace(getStackTrace());
        for (Throwable suppressed : getSuppressed()) {
            last.addSuppressed(suppressed);
        }
        return last;
    }

    /**
     * What kind of failure this is: whether the server refused the event, nothing was sent, or the outcome is
     * unknown.
     *
     * @return the kind
     */
    public Kind kind() {
        return kind;
    }

    /**
     * The {@code Idempotency-Key} the publish was sent with, the same on all its attempts. For a failure of
     * kind {@link Kind#OUTCOME_UNKNOWN}, give it to {@link EventPublisher#publish(
     * eu.arrowhead.eventhandler.api.EventPublishRequest, String) publish(event, key)} or
     * {@link EventPublisher#publishBatch(java.util.List, String) publishBatch(events, key)} with the same
     * event(s) to learn the ids without publishing twice.
     *
     * @return the key; empty for a failure before anything could be sent (a {@link Kind#QUEUE_FULL} refusal, an
     *         event that cannot be encoded as JSON)
     */
    public Optional<String> idempotencyKey() {
        return Optional.ofNullable(idempotencyKey);
    }
    /**
     * The HTTP status of the server's answer, or 0 when there was no answer: the connection could not be
     * opened, broke, or timed out.
     *
     * @return an HTTP status such as 400 or 503, or 0
     */
    public int statusCode() {
        return statusCode;
    }

    /**
     * The server's Arrowhead {@link ErrorMessage} ({@code errorMessage}, {@code errorCode},
     * {@code exceptionType}, {@code origin}), when the answer carried one. It is empty when there was no
     * answer, or when something other than the Event Handler (a proxy, say) answered.
     *
     * @return the server's error, if it sent one
     */
    public Optional<ErrorMessage> errorMessage() {
        return Optional.ofNullable(errorMessage);
    }

    /**
     * Whether this is a failure that may pass, of a kind {@link RetryPolicy} retries: a connection that could
     * not be opened, a {@code 503}, or an I/O failure after the request was sent (and a full
     * {@code publishAsync} queue). When it is thrown, the policy has already given up; the same event may
     * still go through later. False for every {@code 4xx} and other answers that the same request would get
     * again.
     *
     * <p>After an I/O failure the event may in fact have been published: the {@link #kind()} is then
     * {@link Kind#OUTCOME_UNKNOWN}; see {@link RetryPolicy}.
     *
     * @return true if the same publish may succeed later
     */
    public boolean retryable() {
        return retryable;
    }

    /** The server's {@code Retry-After}, or null when it sent none. */
    Duration retryAfter() {
        return retryAfter;
    }
}

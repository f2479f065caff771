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
 * failure, use {@link #statusCode()}, {@link #errorMessage()} and {@link #retryable()}:
 *
 * <pre>{@code
 * try {
 *     publisher.publish(event);
 * } catch (PublishException e) {
 *     if (e.statusCode() == 400) {
 *         // a bug in the event: fix it, do not send it again
 *     } else if (e.retryable()) {
 *         // the server was unreachable, busy or the answer was lost: try later, or keep the event
 *     }
 * }
 * }</pre>
 */
public final class PublishException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The HTTP status of the answer, 0 when there was none. */
    private final int statusCode;
    private final transient ErrorMessage errorMessage;
    /** Whether the failure is of a kind that the retry policy retries. */
    private final boolean retryable;
    private final transient Duration retryAfter;

    private PublishException(String message, Throwable cause, int statusCode, ErrorMessage errorMessage,
                             boolean retryable, Duration retryAfter) {
        super(message, cause);
        this.statusCode = statusCode;
        this.errorMessage = errorMessage;
        this.retryable = retryable;
        this.retryAfter = retryAfter;
    }

    /**
     * The server answered with a status other than success.
     *
     * @param errorMessage the server's Arrowhead error, or null when the body was not one
     * @param retryAfter   the answer's {@code Retry-After}, or null
     */
    static PublishException refused(String what, int statusCode, String detail, ErrorMessage errorMessage,
                                    Duration retryAfter) {
        return new PublishException(what + " refused with " + statusCode + (detail.isEmpty() ? "" : ": " + detail),
                null, statusCode, errorMessage, statusCode == 503, retryAfter);
    }

    /** Nothing, or no complete answer, came back: a connection or I/O failure, retried by the policy. */
    static PublishException noAnswer(String message, Throwable cause) {
        return new PublishException(message, cause, 0, null, true, null);
    }

    /** A failure that trying again would not mend, with no HTTP answer behind it. */
    static PublishException failed(String message, Throwable cause) {
        return new PublishException(message, cause, 0, null, false, null);
    }

    /** A success status whose body could not be read as the expected answer. */
    static PublishException unreadableAnswer(String what, int statusCode, Throwable cause) {
        return new PublishException(what + " answered " + statusCode + " with a body that is not the expected"
                + " answer: " + cause.getMessage(), cause, statusCode, null, false, null);
    }

    /** This failure as the last of {@code attempts}; the earlier ones are known only through the message. */
    PublishException afterAttempts(int attempts) {
        PublishException last = new PublishException(getMessage() + " (gave up after " + attempts + " attempts)",
                getCause(), statusCode, errorMessage, retryable, retryAfter);
        last.setStackTrace(getStackTrace());
        return last;
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
     * not be opened, a {@code 503}, or an I/O failure after the request was sent. When it is thrown, the
     * policy's attempts have already been made; the same event may still go through later. False for every
     * {@code 4xx} and other answers that the same request would get again.
     *
     * <p>After an I/O failure the event may in fact have been published: see {@link RetryPolicy}.
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

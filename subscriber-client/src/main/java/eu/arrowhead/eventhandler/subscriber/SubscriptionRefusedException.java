package eu.arrowhead.eventhandler.subscriber;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/**
 * The server answered a subscription request with an error status instead of an event stream, or with a
 * stream that only says it cannot be served now (an {@code eventhandler.unavailable} notice, reported as
 * status 503).
 *
 * <p>Passed to {@link SubscriptionListener#onDisconnected} when the subscription will try again (5xx,
 * 408, 429) and to {@link SubscriptionListener#onStopped} when it will not (any other 4xx). The message
 * is the server's own explanation when it sent one.
 */
public final class SubscriptionRefusedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The HTTP status of the answer. */
    private final int statusCode;
    /** The server's error body, if it was one; not serialized. */
    private final transient ErrorMessage errorMessage;
    /** How long the server asked to wait, zero if it did not say. */
    private final Duration retryAfter;

    SubscriptionRefusedException(int statusCode, String message, ErrorMessage errorMessage, Duration retryAfter) {
        super("HTTP " + statusCode + ": " + message);
        this.statusCode = statusCode;
        this.errorMessage = errorMessage;
        this.retryAfter = retryAfter;
    }

    /**
     * The HTTP status code of the answer; 503 for a stream that said it cannot be served now.
     *
     * @return the status: anything but 200
     */
    public int statusCode() {
        return statusCode;
    }

    /**
     * The server's Arrowhead error body, when the answer carried one.
     *
     * @return the parsed body; empty when the body was missing or not an {@link ErrorMessage}
     */
    public Optional<ErrorMessage> errorMessage() {
        return Optional.ofNullable(errorMessage);
    }

    /** How long the server asked us to wait ({@code retry:} or {@code Retry-After}); zero when it did not say. */
    Duration retryAfter() {
        return retryAfter;
    }
}

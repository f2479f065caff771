package eu.arrowhead.eventhandler.protocol;

/**
 * The broker cannot take this request now, and may later: the hub is shutting down or at a configured limit,
 * the event store cannot take or give events, a cluster node is cut off from the stream, the push
 * subscriptions are at their budget. A 503 with {@code Retry-After} for a request, the refusal stream for an
 * SSE subscription; never a fault of the caller's.
 */
public final class UnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UnavailableException(String message) {
        super(message, null, false, false);
    }
}

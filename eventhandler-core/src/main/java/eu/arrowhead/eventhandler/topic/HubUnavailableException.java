package eu.arrowhead.eventhandler.topic;

/**
 * The hub cannot take this publish or subscription now (shutting down, at a configured limit, or the event
 * store cannot take or give events): a 503 for a request, the refusal stream for a subscription.
 */
public final class HubUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HubUnavailableException(String message) {
        super(message, null, false, false);
    }
}

package eu.arrowhead.eventhandler.topic;

/** The hub cannot take this publish or subscription now (shutting down, or at a configured limit): a 503. */
public final class HubUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HubUnavailableException(String message) {
        super(message, null, false, false);
    }
}

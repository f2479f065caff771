package eu.arrowhead.eventhandler.api;

/**
 * Arrowhead's categories of error ({@code exceptionType} of an {@link ErrorMessage}), the ones this Event
 * Handler answers with. The one vocabulary of errors: the server names a category only through this enum.
 */
public enum ExceptionType {
    /** A body that breaks the API's rules, is too large, or is not JSON in UTF-8. */
    BAD_PAYLOAD,
    /** A method, query parameter, header or request line that breaks the API's rules; a body too slow. */
    INVALID_PARAMETER,
    /** Nothing at that path or with that id. */
    DATA_NOT_FOUND,
    /** A caller without a trusted identity, or one that may not do what it asks (secure mode). */
    AUTH,
    /** Cannot be served now (a limit, the event store, a shutdown): try again after {@code Retry-After}. */
    UNAVAILABLE,
    /** A fault of the server. */
    GENERIC
}

package eu.arrowhead.eventhandler.http;

/**
 * A request the server refuses, with the status and Arrowhead exception type of the error response.
 * Carries no stack trace: it is an answer, not a fault.
 */
public final class RequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String exceptionType;

    public RequestException(int status, String exceptionType, String message) {
        super(message, null, false, false);
        this.status = status;
        this.exceptionType = exceptionType;
    }

    /** 400 for a body that breaks the API's rules. */
    public static RequestException badPayload(String message) {
        return new RequestException(400, "BAD_PAYLOAD", message);
    }

    /** 400 for a query parameter or header that breaks the API's rules. */
    public static RequestException invalidParameter(String message) {
        return new RequestException(400, "INVALID_PARAMETER", message);
    }

    /** 413 for a body or payload over its configured limit. */
    public static RequestException tooLarge(String message) {
        return new RequestException(413, "BAD_PAYLOAD", message);
    }

    /** 401 for a caller without a trusted client certificate (secure mode). */
    public static RequestException unauthorized(String message) {
        return new RequestException(401, "AUTH", message);
    }

    /** 403 for a caller whose identity may not do what it asks (secure mode). */
    public static RequestException forbidden(String message) {
        return new RequestException(403, "AUTH", message);
    }

    public int status() {
        return status;
    }

    public String exceptionType() {
        return exceptionType;
    }
}

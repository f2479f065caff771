package eu.arrowhead.eventhandler.protocol;

import eu.arrowhead.eventhandler.api.ExceptionType;

/**
 * A request the server refuses, with the status and Arrowhead exception type of the error response.
 * Carries no stack trace: it is an answer, not a fault.
 */
public final class RequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final ExceptionType exceptionType;

    public RequestException(int status, ExceptionType exceptionType, String message) {
        super(message, null, false, false);
        this.status = status;
        this.exceptionType = exceptionType;
    }

    /** 400 for a body that breaks the API's rules. */
    public static RequestException badPayload(String message) {
        return new RequestException(400, ExceptionType.BAD_PAYLOAD, message);
    }

    /** 400 for a query parameter or header that breaks the API's rules. */
    public static RequestException invalidParameter(String message) {
        return new RequestException(400, ExceptionType.INVALID_PARAMETER, message);
    }

    /** 413 for a body or payload over its configured limit. */
    public static RequestException tooLarge(String message) {
        return new RequestException(413, ExceptionType.BAD_PAYLOAD, message);
    }

    /** 401 for a caller without a trusted client certificate (secure mode). */
    public static RequestException unauthorized(String message) {
        return new RequestException(401, ExceptionType.AUTH, message);
    }

    /** 403 for a caller whose identity may not do what it asks (secure mode). */
    public static RequestException forbidden(String message) {
        return new RequestException(403, ExceptionType.AUTH, message);
    }

    public int status() {
        return status;
    }

    public ExceptionType exceptionType() {
        return exceptionType;
    }
}

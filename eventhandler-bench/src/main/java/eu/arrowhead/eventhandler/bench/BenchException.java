package eu.arrowhead.eventhandler.bench;

/** A run that cannot go on, with a message that tells the person at the terminal what went wrong. */
final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BenchException(String message) {
        super(message);
    }

    BenchException(String message, Throwable cause) {
        super(message, cause);
    }
}

package eu.arrowhead.eventhandler.push;

/**
 * Why a POST to a push subscriber failed: the status it answered with and the start of its body, or, with no
 * answer, what went wrong (connection refused, timeout, the server stopping).
 *
 * @param status the HTTP status; 0 if there was no answer
 * @param detail the first bytes of the answer's body ({@link BodyExcerpt}), or the error; never {@code null}
 */
public record FailedPost(int status, String detail) {
    /** The most characters of an I/O error a dead letter keeps (an answer's body is cut at {@link BodyExcerpt}). */
    private static final int MAX_ERROR_CHARS = 512;

    /** No answer. */
    static FailedPost noAnswer(String error) {
        return new FailedPost(0, error);
    }

    /**
     * Whether the subscriber refuses this event for good: a 4xx other than 408 (it timed the request out) and 429
     * (it asks for a slower pace). Trying it again later cannot help; 5xx and no answer can.
     */
    public boolean permanent() {
        return status >= 400 && status < 500 && status != 408 && status != 429;
    }

    /** What a dead letter keeps of it as its answer: the detail, an error cut to 512 characters. */
    public String excerpt() {
        return detail.length() > MAX_ERROR_CHARS ? detail.substring(0, MAX_ERROR_CHARS) : detail;
    }

    @Override
    public String toString() {
        if (status == 0) {
            return detail;
        }
        return detail.isEmpty() ? "status " + status : "status " + status + ": " + detail;
    }
}

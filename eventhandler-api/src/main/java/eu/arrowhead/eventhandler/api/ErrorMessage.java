package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of every error response (Arrowhead 4.x {@code ErrorMessageDTO}).
 *
 * @param errorMessage  what was wrong, for a person to read
 * @param errorCode     the HTTP status code
 * @param exceptionType Arrowhead's category, one of {@link ExceptionType} from this Event Handler; kept a
 *                      string so that a client reads other Arrowhead systems' categories too
 * @param origin        the request path that failed
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ErrorMessage(String errorMessage, int errorCode, String exceptionType, String origin) {

    /**
     * The SSE event type of the notice that refuses a stream for now: its {@code data} is an ErrorMessage with
     * {@code errorCode} 503, and the stream ends after it. The Event Handler answers a stream request it
     * cannot serve now this way, a {@code 200} stream with {@code retry:}, rather than with a 503, because a
     * standard EventSource gives up for good on any status but 200; event types starting with
     * {@code eventhandler.} are reserved.
     */
    public static final String UNAVAILABLE_EVENT_TYPE = "eventhandler.unavailable";

    public ErrorMessage(String errorMessage, int errorCode, ExceptionType exceptionType, String origin) {
        this(errorMessage, errorCode, exceptionType.name(), origin);
    }
}

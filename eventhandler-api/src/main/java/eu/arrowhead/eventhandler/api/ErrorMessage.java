package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of every error response (Arrowhead 4.x {@code ErrorMessageDTO}).
 *
 * @param errorMessage  what was wrong, for a person to read
 * @param errorCode     the HTTP status code
 * @param exceptionType Arrowhead's category: {@code BAD_PAYLOAD}, {@code INVALID_PARAMETER},
 *                      {@code DATA_NOT_FOUND}, {@code AUTH}, {@code UNAVAILABLE}, {@code GENERIC}
 * @param origin        the request path that failed
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ErrorMessage(String errorMessage, int errorCode, String exceptionType, String origin) {
}

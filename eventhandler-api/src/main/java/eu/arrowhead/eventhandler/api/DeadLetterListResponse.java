package eu.arrowhead.eventhandler.api;

import java.util.List;

/**
 * A push subscription's dead letters, oldest first.
 *
 * @param data  the letters
 * @param count how many there are
 */
public record DeadLetterListResponse(List<DeadLetterResponse> data, long count) {
}

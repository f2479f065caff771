package eu.arrowhead.eventhandler.api;

import java.util.List;

/**
 * A page of a push subscription's dead letters, in event id order.
 *
 * @param data  the letters of this page
 * @param count how many the subscription has, not only this page
 */
public record DeadLetterListResponse(List<DeadLetterResponse> data, long count) {
}

package eu.arrowhead.eventhandler.api;

import java.util.List;

/**
 * A page of push subscriptions (Arrowhead 4.x {@code SubscriptionListResponseDTO}).
 *
 * @param data  the subscriptions of the page
 * @param count how many subscriptions there are in all
 */
public record SubscriptionListResponse(List<SubscriptionResponse> data, long count) {
}

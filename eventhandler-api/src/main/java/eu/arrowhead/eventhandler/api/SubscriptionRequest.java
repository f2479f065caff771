package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * The body of {@code POST /eventhandler/subscribe} and {@code PUT /eventhandler/mgmt/subscriptions/{id}}
 * (Arrowhead 4.x {@code SubscriptionRequestDTO}): a push subscription, whose events the Event Handler POSTs
 * to {@code notifyUri} on the subscriber's address and port.
 *
 * @param eventType        the event type, matched case-insensitively
 * @param subscriberSystem the subscriber: systemName, address and port are required
 * @param filterMetaData   metadata an event must contain (values compared case-insensitively) when
 *                         {@code matchMetaData} is true
 * @param notifyUri        the path events are POSTed to, such as {@code /notify}
 * @param matchMetaData    whether {@code filterMetaData} applies; absent means false
 * @param startDate        only events with a timeStamp at or after this ISO-8601 instant, optional
 * @param endDate          only events with a timeStamp at or before this ISO-8601 instant, optional
 * @param sources          only events from these publishers (by systemName), optional
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SubscriptionRequest(
        String eventType,
        SystemRequest subscriberSystem,
        Map<String, String> filterMetaData,
        String notifyUri,
        Boolean matchMetaData,
        String startDate,
        String endDate,
        List<SystemRequest> sources) {
}

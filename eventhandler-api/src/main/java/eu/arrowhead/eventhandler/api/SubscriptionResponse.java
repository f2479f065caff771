package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * A push subscription as the management endpoints show it (Arrowhead 4.x {@code SubscriptionResponseDTO}).
 *
 * @param id               the subscription's id
 * @param eventType        the event type
 * @param subscriberSystem the subscriber
 * @param filterMetaData   metadata an event must contain when {@code matchMetaData} is true
 * @param notifyUri        the path events are POSTed to
 * @param matchMetaData    whether {@code filterMetaData} applies
 * @param startDate        the start of the timeStamp window, or absent
 * @param endDate          the end of the timeStamp window, or absent
 * @param sources          the publishers events are taken from: those asked for, narrowed to those the
 *                         subscriber is authorized to receive from; absent or empty means any
 * @param createdAt        when the subscription was created, an ISO-8601 instant
 * @param updatedAt        when it last changed
 * @param paused           {@code true} while its delivery is paused (it set aside too many events in a row; a sysop
 *                         resumes it), else absent: not part of 4.x's DTO
 * @param pausedReason     why it is paused, or absent
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SubscriptionResponse(
        long id,
        EventTypeResponse eventType,
        SystemResponse subscriberSystem,
        Map<String, String> filterMetaData,
        String notifyUri,
        boolean matchMetaData,
        String startDate,
        String endDate,
        List<SystemResponse> sources,
        String createdAt,
        String updatedAt,
        Boolean paused,
        String pausedReason) {
}

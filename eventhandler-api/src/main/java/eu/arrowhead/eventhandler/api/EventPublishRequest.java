package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * The body of {@code POST /eventhandler/publish} (Arrowhead 4.x {@code EventPublishRequestDTO}).
 *
 * @param eventType the topic: 1 to 255 of letters, digits and {@code ._-:/}, matched case-insensitively
 * @param payload   the event's content, an opaque string (often JSON encoded as a string)
 * @param metaData  key/value pairs that subscribers can filter on, optional
 * @param source    the publishing system, optional
 * @param timeStamp when the event happened, an ISO-8601 instant such as {@code 2026-11-21T10:00:00Z};
 *                  optional, set on arrival when missing
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EventPublishRequest(
        String eventType,
        String payload,
        Map<String, String> metaData,
        SystemRequest source,
        String timeStamp) {

    /** An event with a type and a payload only; the server stamps its arrival time. */
    public static EventPublishRequest of(String eventType, String payload) {
        return new EventPublishRequest(eventType, payload, null, null, null);
    }
}

package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * The body the Event Handler POSTs to a push subscriber's notify URI (Arrowhead 4.x {@code EventDTO}).
 *
 * @param eventType the event type as published
 * @param payload   the event's content
 * @param metaData  the event's metadata, absent if it had none
 * @param timeStamp when the event happened, an ISO-8601 instant
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PushedEvent(String eventType, String payload, Map<String, String> metaData, String timeStamp) {
}

package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * An event as delivered to subscribers: the {@code data} of a Server-Sent Events frame.
 *
 * @param id        the event's place in the broker's global, strictly increasing sequence; also the SSE
 *                  {@code id} a subscriber resumes from
 * @param eventType the event type exactly as it was published
 * @param payload   the payload as published
 * @param metaData  the metadata as published, absent when there was none
 * @param source    the publishing system, absent when the publisher did not name one
 * @param timeStamp the event's time as an ISO-8601 instant in UTC
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Event(
        long id,
        String eventType,
        String payload,
        Map<String, String> metaData,
        SystemRequest source,
        String timeStamp) {
}

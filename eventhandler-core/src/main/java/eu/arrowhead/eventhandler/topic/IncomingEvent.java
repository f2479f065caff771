package eu.arrowhead.eventhandler.topic;

import java.util.Map;

/**
 * A validated event on its way into the hub: everything but its id, already encoded as JSON so that the
 * work done under the hub's lock is a copy of bytes.
 *
 * @param eventType  the event type as published
 * @param topicKey   the topic it belongs to: the event type in lower case
 * @param sourceKey  the publishing system's name in lower case, or {@code null}
 * @param metaData   the event's metadata, never {@code null}
 * @param jsonFields the JSON of the delivered event without its opening brace and id:
 *                   {@code "eventType":...,"timeStamp":"..."}}
 */
public record IncomingEvent(
        String eventType,
        String topicKey,
        String sourceKey,
        Map<String, String> metaData,
        byte[] jsonFields) {
}

package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import java.util.Map;

/**
 * A validated event on its way into the hub: everything but its id, already encoded as JSON so that the
 * work done under the hub's lock is a copy of bytes.
 *
 * @param eventType  the event type as published
 * @param topicKey   the topic it belongs to: the event type in lower case
 * @param sourceKey  the publishing system's name in lower case, or {@code null}
 * @param metaData   the event's metadata, never {@code null}
 * @param timeStampMillis the event's timeStamp, in milliseconds since the epoch
 * @param json       the JSON of the delivered event with id 0 ({@link EventEncoding#withIdZero}); the hub
 *                   writes the real id in when it encodes the frame
 */
public record IncomingEvent(
        String eventType,
        String topicKey,
        String sourceKey,
        Map<String, String> metaData,
        long timeStampMillis,
        byte[] json) {
}

package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.protocol.SseFrames;
import java.util.Map;

/**
 * An event with its id, encoded once as a complete Server-Sent Events frame ({@link SseFrames#event}). The
 * same immutable frame is written to every subscriber, so fan-out costs no serialization and no copy per
 * subscriber. Comment frames (heartbeats) are instances too, with no topic, so that one queue carries both.
 */
public final class PublishedEvent {
    /** This object and the frame's array header. */
    private static final int OVERHEAD_BYTES = 64;
    private static final int METADATA_ENTRY_BYTES = 128;

    private final long id;
    private final TopicBroadcaster topic;
    private final String sourceKey;
    private final Map<String, String> metaData;
    private final long timeStampMillis;
    private final byte[] frame;

    private PublishedEvent(long id, TopicBroadcaster topic, String sourceKey, Map<String, String> metaData,
                           long timeStampMillis, byte[] frame) {
        this.id = id;
        this.topic = topic;
        this.sourceKey = sourceKey;
        this.metaData = metaData;
        this.timeStampMillis = timeStampMillis;
        this.frame = frame;
    }

    static PublishedEvent encode(long id, IncomingEvent event, TopicBroadcaster topic) {
        return new PublishedEvent(id, topic, event.sourceKey(), event.metaData(), event.timeStampMillis(),
                SseFrames.event(id, event.eventType(), event.json()));
    }

    /** An event read back from the event store, for a replay; it counts to no topic. */
    public static PublishedEvent logged(long id, IncomingEvent event) {
        return encode(id, event, null);
    }

    /** A frame that carries no event ({@link SseFrames}: a comment or a notice), counted to no topic. */
    public static PublishedEvent control(byte[] frame) {
        return new PublishedEvent(0, null, null, Map.of(), 0, frame);
    }

    /** The event's id; 0 for a control frame. */
    public long id() {
        return id;
    }

    /** The source's system name, lower case; {@code null} for an event without a source. */
    public String sourceKey() {
        return sourceKey;
    }

    Map<String, String> metaData() {
        return metaData;
    }

    /** The event's timeStamp, in milliseconds since the epoch; 0 for a control frame. */
    public long timeStampMillis() {
        return timeStampMillis;
    }

    /**
     * A copy of the event's JSON, the data of its frame. Push delivery re-encodes events from it instead of
     * every event keeping a second copy of its payload for the few that have push subscribers.
     */
    public byte[] eventJson() {
        return SseFrames.eventJson(frame);
    }

    /**
     * What the event holds on the heap: its frame, this object, and the metadata map parsed from the JSON
     * (whose strings repeat part of the frame), estimated on the safe side as the store's buffer does.
     */
    public long heapBytes() {
        return OVERHEAD_BYTES + frame.length + (long) METADATA_ENTRY_BYTES * metaData.size();
    }

    /** The complete SSE frame, ending with its blank line. Shared: never modify it. */
    public byte[] frame() {
        return frame;
    }

    /** Counts this event as written to one subscriber. */
    public void delivered() {
        if (topic != null) {
            topic.countDelivered();
        }
    }

    /** Counts this event as abandoned for one subscriber. */
    public void dropped() {
        if (topic != null) {
            topic.countDropped();
        }
    }
}

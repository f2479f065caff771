package eu.arrowhead.eventhandler.topic;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * An event with its id, encoded once as a complete Server-Sent Events frame. The same immutable frame
 * is written to every subscriber, so fan-out costs no serialization and no copy per subscriber.
 * Comment frames (heartbeats) are instances too, with no topic, so that one queue carries both.
 */
public final class PublishedEvent {
    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "\nevent: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
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
        byte[] idText = Long.toString(id).getBytes(StandardCharsets.US_ASCII);
        byte[] type = event.eventType().getBytes(StandardCharsets.US_ASCII);
        byte[] json = event.json();
        byte[] frame = new byte[ID.length + idText.length + EVENT.length + type.length + DATA.length
                + EventEncoding.lengthWithId(json, idText) + 2];
        int at = put(frame, 0, ID);
        at = put(frame, at, idText);
        at = put(frame, at, EVENT);
        at = put(frame, at, type);
        at = put(frame, at, DATA);
        at = EventEncoding.putWithId(json, idText, frame, at);
        frame[at++] = '\n';
        frame[at] = '\n';
        return new PublishedEvent(id, topic, event.sourceKey(), event.metaData(), event.timeStampMillis(), frame);
    }

    /** An event read back from the event store, for a replay; it counts to no topic. */
    public static PublishedEvent logged(long id, IncomingEvent event) {
        return encode(id, event, null);
    }

    /** A frame that carries no event: an SSE comment or a notice, counted to no topic. */
    public static PublishedEvent control(String frameText) {
        return new PublishedEvent(0, null, null, Map.of(), 0, frameText.getBytes(StandardCharsets.UTF_8));
    }

    private static int put(byte[] into, int at, byte[] bytes) {
        System.arraycopy(bytes, 0, into, at, bytes.length);
        return at + bytes.length;
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
        int dataAt = 0;
        while (frame[dataAt] != '\n' || frame[dataAt + 1] != 'd') {
            // The event type holds no newline, so the first line starting with 'd' is the data line.
            dataAt++;
        }
        return Arrays.copyOfRange(frame, dataAt + DATA.length, frame.length - 2);
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

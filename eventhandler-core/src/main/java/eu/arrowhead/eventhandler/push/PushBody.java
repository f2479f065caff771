package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.topic.PublishedEvent;

/**
 * One event's 4.x {@code EventDTO} JSON, shared by every push subscriber of the event and encoded once, by
 * the first sender that needs it rather than under the hub's lock. Until then it holds the published event;
 * afterwards only the bytes, so that a queued body does not keep the SSE frame alive.
 */
final class PushBody {
    private final long id;
    private final long sizeBytes;
    private final String sourceKey;
    private PublishedEvent event;
    private byte[] json;

    PushBody(PublishedEvent event) {
        this.event = event;
        this.id = event.id();
        this.sizeBytes = event.heapBytes();
        this.sourceKey = event.sourceKey();
    }

    /** The event's id. */
    long id() {
        return id;
    }

    /** The event's source, kept after the event is encoded: a subscriber's publishers may change while it waits. */
    String sourceKey() {
        return sourceKey;
    }

    /**
     * The heap it holds: the published event (frame and metadata) until it is encoded, then its JSON, which
     * has the frame's fields less the id and source.
     */
    long sizeBytes() {
        return sizeBytes;
    }

    synchronized byte[] json() {
        if (json == null) {
            json = EventEncoding.pushed(event.eventJson());
            event = null;
        }
        return json;
    }
}

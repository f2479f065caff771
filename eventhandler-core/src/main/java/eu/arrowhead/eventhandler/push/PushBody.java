package eu.arrowhead.eventhandler.push;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.PushedEvent;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.io.IOException;

/**
 * One event's 4.x {@code EventDTO} JSON, shared by every push subscriber of the event and encoded once, by
 * the first sender that needs it rather than under the hub's lock. Until then it holds the published event;
 * afterwards only the bytes, so that a queued body does not keep the SSE frame alive.
 */
final class PushBody {
    private static final ObjectReader READER = JsonMapper.get().readerFor(Event.class);
    private static final ObjectWriter WRITER = JsonMapper.get().writerFor(PushedEvent.class);

    private final long sizeBytes;
    private PublishedEvent event;
    private byte[] json;

    PushBody(PublishedEvent event) {
        this.event = event;
        this.sizeBytes = event.heapBytes();
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
            try {
                Event parsed = READER.readValue(event.eventJson());
                json = WRITER.writeValueAsBytes(new PushedEvent(parsed.eventType(), parsed.payload(),
                        parsed.metaData(), parsed.timeStamp()));
            } catch (IOException e) {
                throw new IllegalStateException("an event the hub encoded cannot be read back", e);
            }
            event = null;
        }
        return json;
    }
}

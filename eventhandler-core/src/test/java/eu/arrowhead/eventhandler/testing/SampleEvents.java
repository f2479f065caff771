package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Events as the validator hands them to the hub, for tests that drive the hub without HTTP. */
public final class SampleEvents {
    private static final String TIME_STAMP = "2024-05-01T12:00:00Z";

    private SampleEvents() {
    }

    /** One event of {@code eventType} without source or metadata. */
    public static IncomingEvent incoming(String eventType, String payload) {
        return new IncomingEvent(eventType, eventType.toLowerCase(Locale.ROOT), null, Map.of(), 0,
                EventEncoding.withIdZero(eventType, payload, null, null, TIME_STAMP));
    }

    /** {@code count} events of {@code eventType}, their payloads {@code label}-0, {@code label}-1, ... */
    public static List<IncomingEvent> batch(String eventType, String label, int count) {
        List<IncomingEvent> events = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            events.add(incoming(eventType, label + "-" + i));
        }
        return events;
    }
}

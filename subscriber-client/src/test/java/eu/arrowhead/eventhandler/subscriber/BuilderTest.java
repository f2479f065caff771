package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** What the builder refuses before anything is sent, and the request it makes of what it accepts. */
class BuilderTest {
    private final EventSubscriber.Builder builder = EventSubscriber.builder(URI.create("http://localhost:8455"));

    @Test
    void refusesEventTypesTheServerWouldRefuse() {
        assertRefused("event type 'temp rature' may contain only letters, digits and . _ - : / (found ' ' at position 5)",
                () -> builder.eventTypes("temperature", "temp rature"));
        assertRefused("event type 'küche' may contain only letters, digits and . _ - : / (found 'ü' at position 2)",
                () -> builder.eventTypes("küche"));
        assertRefused("an event type is 1 to 255 characters long, not ''", () -> builder.eventTypes(""));
        assertRefused("an event type is 1 to 255 characters long, not null", () -> builder.eventTypes((String) null));
        assertRefused("at least one event type is required", () -> builder.eventTypes());
        assertThrows(IllegalArgumentException.class, () -> builder.eventTypes("a".repeat(256)));
        builder.eventTypes("a".repeat(255), "Plant-1/line_2:temperature.celsius");
    }

    @Test
    void refusesOtherSettingsOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> builder.sources("sensor-1", " "));
        assertThrows(IllegalArgumentException.class, () -> builder.metaData("", "celsius"));
        assertThrows(IllegalArgumentException.class, () -> builder.metaData("unit", null));
        assertThrows(IllegalArgumentException.class, () -> builder.subscriberSystem(" "));
        Duration second = Duration.ofSeconds(1);
        assertThrows(IllegalArgumentException.class, () -> builder.reconnectBackoff(Duration.ZERO, second));
        assertThrows(IllegalArgumentException.class, () -> builder.reconnectBackoff(second.multipliedBy(2), second));
        assertThrows(IllegalArgumentException.class, () -> builder.reconnectBackoff(second, Duration.ofDays(25)));
        assertThrows(IllegalArgumentException.class, () -> builder.jitter(1.5));
        assertThrows(IllegalArgumentException.class, () -> builder.jitter(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> builder.readTimeout(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> builder.readTimeout(Duration.ofNanos(999_999)));
        assertThrows(IllegalArgumentException.class, () -> builder.connectTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> builder.startAfterId(-1));
        assertThrows(IllegalArgumentException.class, () -> EventSubscriber.builder(URI.create("ftp://localhost:8455")));
        assertThrows(IllegalArgumentException.class, () -> EventSubscriber.builder(URI.create("localhost:8455")));
        assertThrows(IllegalArgumentException.class, () -> EventSubscriber.builder(URI.create("http://localhost/?a=b")));
    }

    @Test
    void requiresEventTypesAndAListener() {
        assertEquals("eventTypes(...) is required: which events to subscribe to",
                assertThrows(IllegalStateException.class, () -> builder.listener(event -> { }).subscribe()).getMessage());
        assertEquals("listener(...) is required: who receives the events",
                assertThrows(IllegalStateException.class,
                        () -> EventSubscriber.builder(URI.create("http://localhost:8455")).eventTypes("a").subscribe())
                        .getMessage());
    }

    @Test
    void buildsTheQueryFromTypesSourcesAndMetadataEncodingEachValue() {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("unit", "°C");
        meta.put("a b", "x+y&z=1");
        assertEquals(URI.create("http://h:1/eventhandler/events?eventType=temperature&eventType=plant%2F1"
                        + "&source=sensor%201&meta.unit=%C2%B0C&meta.a%20b=x%2By%26z%3D1&subscriber=display%201"),
                SubscriptionLoop.eventsUri(URI.create("http://h:1"), List.of("temperature", "plant/1"),
                        List.of("sensor 1"), meta, "display 1"));
        assertEquals(URI.create("https://gw/eh/eventhandler/events?eventType=a"),
                SubscriptionLoop.eventsUri(URI.create("https://gw/eh/"), List.of("a"), List.of(), Map.of(), null));
        assertEquals(URI.create("https://gw/eh/eventhandler/events?eventType=a"),
                SubscriptionLoop.eventsUri(URI.create("https://gw/eh"), List.of("a"), List.of(), Map.of(), null));
    }

    private static void assertRefused(String message, Executable call) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, call).getMessage());
    }
}

package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The builder refuses what cannot work, at once, with a message that says what is wrong. */
class BuilderTest {
    private static final URI LOCAL = URI.create("http://localhost:8455");

    @Test
    void baseUriMustBeAnHttpUriWithAHost() {
        assertRefused("baseUri is required, such as http://localhost:8455", () -> EventPublisher.builder((URI) null));
        assertRefused("baseUri must be an http or https URI with a host, such as http://localhost:8455: localhost:8455",
                () -> EventPublisher.builder(URI.create("localhost:8455")));
        assertRefused("baseUri must be an http or https URI with a host, such as http://localhost:8455: ftp://host",
                () -> EventPublisher.builder(URI.create("ftp://host")));
        assertRefused("baseUri must have no query or fragment: http://host:8455?x=1",
                () -> EventPublisher.builder(URI.create("http://host:8455?x=1")));
    }

    @Test
    void settingsAreChecked() {
        EventPublisher.Builder builder = EventPublisher.builder(LOCAL);
        assertRefused("connectTimeout must be between 1 ms and 2147483647 ms: PT0S",
                () -> builder.connectTimeout(Duration.ZERO));
        assertRefused("readTimeout must be between 1 ms and 2147483647 ms: PT0.0005S",
                () -> builder.readTimeout(Duration.ofNanos(500_000)));
        assertRefused("readTimeout must be between 1 ms and 2147483647 ms: null", () -> builder.readTimeout(null));
        assertRefused("maxConnections must be at least 1: 0", () -> builder.maxConnections(0));
        assertRefused("maxQueuedBytes must be at least 1: 0", () -> builder.maxQueuedBytes(0));
        assertRefused("maxAsyncBatch must be between 1 and 1000: 0", () -> builder.maxAsyncBatch(0));
        assertRefused("maxAsyncBatch must be between 1 and 1000: 1001", () -> builder.maxAsyncBatch(1001));
        assertRefused("retryPolicy is required; RetryPolicy.NONE turns retries off", () -> builder.retryPolicy(null));
        assertRefused("source must be a system with a systemName: SystemRequest[systemName= , address=null, port=null,"
                + " authenticationInfo=null, metadata=null]", () -> builder.source(SystemRequest.named(" ")));
        assertRefused("sslContext must not be null", () -> builder.sslContext(null));
    }

    @Test
    void aKeyGivenToPublishMustBeOneTheServerTakes() {
        EventPublishRequest event = EventPublishRequest.of("t", "x");
        try (EventPublisher publisher = EventPublisher.builder(LOCAL).build()) {
            assertRefused("Idempotency-Key must be 1 to 128 visible ASCII characters: ''", () -> publisher.publish(event, ""));
            assertRefused("Idempotency-Key must be 1 to 128 visible ASCII characters: 'a b'",
                    () -> publisher.publishBatch(List.of(event), "a b"));
            String tooLong = "k".repeat(129);
            assertRefused("Idempotency-Key must be 1 to 128 visible ASCII characters: '" + tooLong + "'",
                    () -> publisher.publish(event, tooLong));
        }
    }

    private static void assertRefused(String message, Executable call) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, call).getMessage());
    }
}

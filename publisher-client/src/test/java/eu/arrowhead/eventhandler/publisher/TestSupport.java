package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

/** What several tests need: the server's connection counter, events as subscribers see them. */
final class TestSupport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TestSupport() {
    }

    /** The base URI of a test server, as an application would configure it. */
    static URI baseUri(TestServer server) {
        return server.uri("/");
    }

    /**
     * TCP connections the server has accepted since it started. The test server's own client keeps one
     * connection alive for reading it, so a difference between two readings counts the connections that
     * others opened in between.
     */
    static long connectionsAccepted(TestServer server) {
        return (long) server.metric("eventhandler_connections_accepted_total");
    }

    /** Events published to a topic; 0 when the server holds no such topic. */
    static long publishedTo(TestServer server, String eventType) {
        return server.topic(eventType).map(TopicStats::published).orElse(0L);
    }

    /** The event an SSE frame carries. */
    static Event event(SseStream.Frame frame) throws JsonProcessingException {
        return JSON.readValue(frame.data(), Event.class);
    }

    /** A publish that failed, and how long the call took. */
    record Failure(PublishException exception, Duration took) {
    }

    /** Publishes {@code event}, which must fail; returns the failure with the time the call took. */
    static Failure failedPublish(EventPublisher publisher, EventPublishRequest event) {
        long start = System.nanoTime();
        PublishException e = assertThrows(PublishException.class, () -> publisher.publish(event));
        return new Failure(e, Duration.ofNanos(System.nanoTime() - start));
    }

    /** The live threads that run asynchronous publishes. */
    static Set<Thread> publisherThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().matches("eventhandler-publisher-\\d+"))
                .collect(Collectors.toSet());
    }
}

package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/** What several tests need: the server's connection counter, events as subscribers see them. */
final class TestSupport {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONNECTIONS_ACCEPTED = "eventhandler_connections_accepted_total ";

    private TestSupport() {
    }

    /** The base URI of a test server, as an application would configure it. */
    static URI baseUri(TestServer server) {
        return server.uri("/");
    }

    /**
     * TCP connections the server has accepted since it started, from {@code GET /metrics}. The test server's
     * own client keeps one connection alive for this, so a difference between two readings counts the
     * connections that others opened in between.
     */
    static long connectionsAccepted(TestServer server) {
        Reply metrics = server.get("/metrics");
        for (String line : metrics.body().split("\n")) {
            if (line.startsWith(CONNECTIONS_ACCEPTED)) {
                return (long) Double.parseDouble(line.substring(CONNECTIONS_ACCEPTED.length()).strip());
            }
        }
        throw new AssertionError("no " + CONNECTIONS_ACCEPTED + "in /metrics: " + metrics.body());
    }

    /** Events published to a topic, from {@code GET /eventhandler/mgmt/topics}; 0 when there is no such topic. */
    static long publishedTo(TestServer server, String eventType) throws JsonProcessingException {
        TopicStats[] topics = JSON.readValue(server.get("/eventhandler/mgmt/topics").body(), TopicStats[].class);
        return Arrays.stream(topics).filter(topic -> topic.eventType().equals(eventType))
                .mapToLong(TopicStats::published).sum();
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

package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    /**
     * Starts a server on {@code port} (0 for any) whose event log is an H2 file in {@code directory}, in
     * {@code store.mode=sync} (a 200 means the event is in the log): started again with the same arguments it
     * goes on with the same log.
     */
    static TestServer startWithLog(int port, Path directory, String... keyValues) {
        List<String> settings = new ArrayList<>(List.of("server.port", Integer.toString(port), "store.mode", "sync",
                "store.url", "jdbc:h2:file:" + directory.resolve("log"), "store.user", "sa", "store.password", ""));
        settings.addAll(List.of(keyValues));
        return TestServer.start(settings.toArray(String[]::new));
    }

    /** The payloads of the events of {@code eventType} in the server's log ({@code mgmt/events}), in id order. */
    static List<String> loggedPayloads(TestServer server, String eventType) throws JsonProcessingException {
        List<String> payloads = new ArrayList<>();
        long afterId = 0;
        while (true) {
            Reply page = server.get("/eventhandler/mgmt/events?eventType=" + eventType + "&afterId=" + afterId);
            if (page.statusCode() != 200) {
                throw new AssertionError("mgmt/events answered " + page.statusCode() + ": " + page.body());
            }
            JsonNode answer = JSON.readTree(page.body());
            for (JsonNode event : answer.get("data")) {
                payloads.add(event.get("payload").asText());
            }
            if (!answer.has("nextAfterId")) {
                return payloads;
            }
            afterId = answer.get("nextAfterId").asLong();
        }
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

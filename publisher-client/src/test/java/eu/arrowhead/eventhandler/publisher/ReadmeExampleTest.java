package eu.arrowhead.eventhandler.publisher;

import static eu.arrowhead.eventhandler.publisher.TestSupport.baseUri;
import static eu.arrowhead.eventhandler.publisher.TestSupport.event;
import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.testing.ReadmeSnippet;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The example of the README, run as it is printed there. */
class ReadmeExampleTest {

    @Test
    void theReadmeShowsThisExampleAsItIs() throws Exception {
        ReadmeSnippet.assertInReadme(Path.of("src/test/java/eu/arrowhead/eventhandler/publisher/ReadmeExampleTest.java"),
                "publisher");
    }

    @Test
    void readmeExamplePublishesBothEvents() throws Exception {
        try (TestServer server = TestServer.start();
             SseStream stream = server.subscribe("?eventType=temperature")) {
            publishLikeTheReadme(baseUri(server));

            List<SseStream.Frame> frames = stream.events(2, Duration.ofSeconds(30));
            Event first = event(frames.get(0));
            Event second = event(frames.get(1));
            assertEquals("21.5", first.payload());
            assertEquals(Map.of("unit", "celsius", "room", "B12"), first.metaData());
            assertEquals("sensor-1", first.source().systemName());
            assertEquals("21.6", second.payload());
            assertEquals(first.source(), second.source());
            assertEquals(first.id() + 1, second.id());
        }
    }

    /** {@code eventHandler} is where the Event Handler listens, such as {@code http://localhost:8455}. */
    private static void publishLikeTheReadme(URI eventHandler) {
        // README:begin publisher
        try (EventPublisher publisher = EventPublisher.builder(eventHandler)
                .source(new SystemRequest("sensor-1", "192.168.1.20", 8080, null, null))
                .build()) {
            // Waits for the server's answer: the event's id, or a PublishException saying what went wrong.
            long id = publisher.publish(new EventPublishRequest("temperature", "21.5",
                    Map.of("unit", "celsius", "room", "B12"), null, null));
            System.out.println("published event " + id);

            // Returns at once; the publisher's own thread sends queued events in call order.
            publisher.publishAsync(EventPublishRequest.of("temperature", "21.6"))
                    .whenComplete((asyncId, failure) -> {
                        if (failure != null) {
                            System.err.println("not published: " + failure.getMessage());
                        }
                    });
        } catch (PublishException e) {
            // After the retry policy gave up (60 s by default): e.kind() is REFUSED (e.statusCode() 400 for an
            // invalid event), NOT_SENT, or OUTCOME_UNKNOWN: publish(event, e.idempotencyKey().get()) tells
            // later whether it was published, without publishing it twice
            System.err.println(e.getMessage());
        } // close() sends what is still queued, then closes the connection
        // README:end publisher
    }
}

package eu.arrowhead.eventhandler.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ReadmeSnippet;
import eu.arrowhead.eventhandler.testing.TestServer;
import jakarta.ws.rs.ClientErrorException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.sse.InboundSseEvent;
import jakarta.ws.rs.sse.SseEventSource;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Jersey's {@link SseEventSource}, JAX-RS's standard SSE client (jersey-media-sse): events in order, and the
 * README's pattern for what it does not do by itself (finding 4). It reconnects when a stream ends, and after a
 * 503, but gives up on a connection that is refused, as it is while the server restarts: the application then
 * opens a new one from the last id it saw.
 */
@Timeout(120)
class JerseySseEventSourceTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theReadmeShowsTheResumePatternAsItIs() throws Exception {
        ReadmeSnippet.assertInReadme(
                Path.of("src/test/java/eu/arrowhead/eventhandler/clients/JerseySseEventSourceTest.java"), "jersey-resume");
    }

    @Test
    void eventsArriveInOrder() throws Exception {
        BlockingQueue<InboundSseEvent> received = new LinkedBlockingQueue<>();
        TestServer server = TestServer.start();
        Client client = ClientBuilder.newClient();
        SseEventSource source = SseEventSource.target(client.target(server.uri("/eventhandler/events?eventType=ordered")))
                .build();
        try {
            source.register(event -> {
                if ("ordered".equals(event.getName())) {
                    received.add(event);
                }
            });
            source.open();
            awaitSubscribers(server, "ordered");
            List<Long> published = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                published.add(server.publish("ordered", Integer.toString(i)));
            }
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < published.size(); i++) {
                InboundSseEvent event = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertNotNull(event, "event " + i + " of " + published.size());
                JsonNode data = JSON.readTree(event.readData());
                assertEquals(Integer.toString(i), data.get("payload").asText());
                assertEquals(event.getId(), data.get("id").asText());
                ids.add(Long.parseLong(event.getId()));
            }
            assertEquals(published, ids);
        } finally {
            // The server first: closing an SseEventSource that is reading waits up to 5 s for its thread.
            TestServer.closeAll(server, source, client);
        }
    }

    @Test
    void theReadmePatternResumesAcrossARestartAfterAnEventWasSeen(@TempDir Path store) throws Exception {
        resumesAcrossARestart(store, true);
    }

    @Test
    void theReadmePatternResumesAcrossARestartBeforeTheFirstEvent(@TempDir Path store) throws Exception {
        resumesAcrossARestart(store, false);
    }

    /**
     * As {@link EventSourceContract}'s restart: events published while the server is down (through an instance on
     * another port over the same event store) all reach the README's subscriber once it is back.
     */
    private static void resumesAcrossARestart(Path store, boolean eventSeen) throws Exception {
        H2Log log = new H2Log(store);
        BlockingQueue<String> temperatures = new LinkedBlockingQueue<>();
        AtomicReference<Exception> failure = new AtomicReference<>();
        List<Long> published = new ArrayList<>();
        TestServer first = TestServer.start(log.serverSettings());
        URI eventHandler = first.server().baseUri();
        Thread subscriber = new Thread(() -> {
            try {
                subscribe(eventHandler, temperatures);
            } catch (InterruptedException e) {
                // the test is over
            } catch (Exception e) {
                failure.set(e);
            }
        }, "readme-jersey-subscriber");
        TestServer again = null;
        try {
            subscriber.start();
            awaitSubscribers(first, "temperature");
            if (eventSeen) {
                published.add(first.publish("temperature", "21.5"));
                assertEquals(published, ids(temperatures, 1, failure));
            }
            first.close();
            try (TestServer meanwhile = TestServer.start(log.serverSettings())) {
                for (int i = 0; i < 20; i++) {
                    published.add(meanwhile.publish("temperature", "meanwhile-" + i));
                }
            }
            again = TestServer.start(log.serverSettings("server.port", Integer.toString(eventHandler.getPort())));
            List<Long> received = ids(temperatures, published.size() - (eventSeen ? 1 : 0), failure);
            published.add(again.publish("temperature", "live"));
            received.addAll(ids(temperatures, 1, failure));
            assertEquals(published.subList(eventSeen ? 1 : 0, published.size()), received, "every event, once, in order");
        } finally {
            // The server first: closing an SseEventSource that is reading waits up to 5 s for its thread.
            TestServer.closeAll(first, again);
            subscriber.interrupt();
            subscriber.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    /**
     * The README's example: {@code temperatures} gets the data of every event, in order, across restarts, until
     * the thread is interrupted.
     */
    private static void subscribe(URI eventHandler, BlockingQueue<String> temperatures) throws Exception {
        // README:begin jersey-resume
        try (Client client = ClientBuilder.newClient()) {
            AtomicReference<String> lastEventId = new AtomicReference<>(); // none yet: events from now on
            while (true) {
                WebTarget stream = client.target(eventHandler).path("eventhandler/events")
                        .queryParam("eventType", "temperature");
                if (lastEventId.get() != null) {
                    stream = stream.queryParam("lastEventId", lastEventId.get());
                }
                CompletableFuture<Throwable> gaveUp = new CompletableFuture<>();
                try (SseEventSource source = SseEventSource.target(stream).build()) {
                    source.register(event -> {
                        if (event.getId() != null) {
                            lastEventId.set(event.getId()); // a new stream's opening carries one too
                        }
                        if ("temperature".equals(event.getName())) {
                            temperatures.add(event.readData());
                        }
                    }, gaveUp::complete);
                    source.open();
                    if (gaveUp.get() instanceof ClientErrorException refused) {
                        throw refused; // a 4xx: a bad request or a refusal (403), not worth retrying
                    }
                }
                TimeUnit.SECONDS.sleep(1); // the server is down or restarting: try again in a moment
            }
        }
        // README:end jersey-resume
    }

    /** The ids of the next {@code count} events' data in {@code temperatures}. */
    private static List<Long> ids(BlockingQueue<String> temperatures, int count, AtomicReference<Exception> failure)
            throws InterruptedException, IOException {
        List<Long> ids = new ArrayList<>();
        while (ids.size() < count) {
            String data = temperatures.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            if (data == null) {
                throw new AssertionError("the README's subscriber got " + ids.size() + " of " + count
                        + " events: " + ids, failure.get());
            }
            ids.add(JSON.readTree(data).get("id").asLong());
        }
        return ids;
    }

    /** Waits until the server has a subscriber of {@code eventType}: the client's stream is open. */
    private static void awaitSubscribers(TestServer server, String eventType) throws InterruptedException {
        Await.until("a subscriber of " + eventType, WAIT,
                () -> server.topic(eventType).map(TopicStats::subscribers).orElse(0) > 0);
    }
}

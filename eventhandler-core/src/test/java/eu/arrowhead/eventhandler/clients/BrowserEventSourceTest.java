package eu.arrowhead.eventhandler.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.testing.ReadmeSnippet;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chromium's {@code EventSource} (Debian's /usr/bin/chromium, headless, driven by playwright-core) in pages of
 * the server's own origin, and (finding 1, CORS) in pages of other origins, allowed by {@code http.cors-origins}
 * or not.
 */
class BrowserEventSourceTest extends EventSourceContract {
    private static final String PUBLISH = "/eventhandler/publish";

    @Override
    NodeClients.Kind kind() {
        return NodeClients.Kind.BROWSER;
    }

    @Override
    void open(String source, TestServer server, String query, String... eventTypes) throws InterruptedException {
        clients.openPage(source, server.uri("/eventhandler/echo"));
        clients.open(source, source, server.uri("/eventhandler/events" + query), eventTypes);
    }

    @Test
    void aPageOfTheServersOwnOriginSubscribesAndPublishes() throws Exception {
        try (TestServer server = TestServer.start()) {
            open("same", server, "?eventType=same.origin", "same.origin");
            clients.awaitFirst("same", "open");
            long id = publishedId(clients.fetchJson("same", "POST", server.uri(PUBLISH), event("same.origin")));
            assertEquals(List.of(id), ids(clients.awaitEvents("same", "same.origin", 1)));
        }
    }

    @Test
    void aPageOfAnAllowedOriginSubscribesAndPublishes() throws Exception {
        String allowed = pageOrigin(0);
        try (TestServer server = TestServer.start("http.cors-origins", allowed)) {
            clients.openPage("allowed", URI.create(allowed + "/"));
            clients.open("allowed", "allowed", server.uri("/eventhandler/events?eventType=cors.allowed"), "cors.allowed");
            clients.awaitFirst("allowed", "open");
            // A JSON body makes the browser ask first (a preflight OPTIONS).
            long id = publishedId(clients.fetchJson("allowed", "POST", server.uri(PUBLISH), event("cors.allowed")));
            assertEquals(List.of(id), ids(clients.awaitEvents("allowed", "cors.allowed", 1)));
        }
    }

    /**
     * A stream that ends after a page of the event store's events makes the browser reconnect with
     * {@code Last-Event-ID}, a header CORS must allow too.
     */
    @Test
    void aPageOfAnAllowedOriginResumesWithLastEventId(@TempDir Path store) throws Exception {
        String allowed = pageOrigin(0);
        try (TestServer server = TestServer.start(new H2Log(store).serverSettings("store.mode", "sync",
                "http.cors-origins", allowed, "replay.window-events", "0", "store.replay-page-events", "2"))) {
            List<Long> published = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                published.add(server.publish("cors.resume", Integer.toString(i)));
            }
            clients.openPage("resume", URI.create(allowed + "/"));
            clients.open("resume", "resume", server.uri("/eventhandler/events?eventType=cors.resume&lastEventId=0"),
                    "cors.resume");
            assertEquals(published, ids(clients.awaitEvents("resume", "cors.resume", published.size())),
                    clients.transcript());
        }
    }

    @Test
    void aPageOfAnotherOriginGetsNothing() throws Exception {
        try (TestServer server = TestServer.start("http.cors-origins", pageOrigin(0))) {
            String refused = pageOrigin(1);
            clients.openPage("refused", URI.create(refused + "/"));
            clients.open("refused", "refused", server.uri("/eventhandler/events?eventType=cors.refused"), "cors.refused");
            assertEquals(CLOSED, clients.awaitFirst("refused", "error").readyState(), clients.transcript());

            JsonNode publish = clients.fetchJson("refused", "POST", server.uri(PUBLISH), event("cors.refused"));
            assertTrue(publish.has("failed"), "the browser must refuse the page's publish: " + publish);
            assertEquals(0, server.topic("cors.refused").map(TopicStats::published).orElse(0L),
                    "the refused preflight kept the publish from being sent");
        }
    }

    @Test
    void theReadmeShowsTheBrowserExampleAsItIs() throws Exception {
        ReadmeSnippet.assertInReadme(Path.of("src/test/js/readme-example.js"), "browser");
    }

    @Test
    void theReadmesBrowserExampleLogsEachTemperature() throws Exception {
        try (TestServer server = TestServer.start()) {
            clients.openPage("readme", server.uri("/eventhandler/echo"));
            clients.runScript("readme", "readme-example.js");
            clients.awaitThat("the example's subscription",
                    () -> server.topic("temperature").map(TopicStats::subscribers).orElse(0) == 1);
            Reply reply = server.post(PUBLISH,
                    "{\"eventType\":\"temperature\",\"payload\":\"21.5\",\"source\":{\"systemName\":\"sensor-1\"}}");
            assertEquals(200, reply.statusCode(), reply.body());
            clients.awaitThat("the example's log", () -> clients.seen("readme").stream()
                    .anyMatch(seen -> seen.kind().equals("console") && seen.data().equals("temperature from sensor-1: 21.5")));
        }
    }

    /** One of the two origins of the Node process's own pages (0 or 1): another port than the server's. */
    private String pageOrigin(int index) {
        return clients.hello().get("pageOrigins").get(index).asText();
    }

    private static String event(String eventType) {
        return "{\"eventType\":\"" + eventType + "\",\"payload\":\"from a page\"}";
    }

    private static long publishedId(JsonNode fetched) throws IOException {
        assertTrue(fetched.has("status"), "the browser refused the publish: " + fetched);
        assertEquals(200, fetched.get("status").asInt(), fetched.toString());
        return JSON.readTree(fetched.get("body").asText()).get("id").asLong();
    }
}

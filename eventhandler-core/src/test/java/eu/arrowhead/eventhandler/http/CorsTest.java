package eu.arrowhead.eventhandler.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.testing.BusyWorker;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpOptions;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.junit.jupiter.api.Test;

/** CORS over real HTTP: preflights, the headers on every kind of answer, and refused origins. */
class CorsTest {
    private static final String PAGE = "http://page.example";
    private static final String EVENT = "{\"eventType\":\"cors\",\"payload\":\"p\"}";

    @Test
    void offByDefaultACrossOriginRequestIsRefusedAndNothingPublished() {
        try (TestServer server = TestServer.start()) {
            Reply preflight = server.send(preflight(server, "/eventhandler/publish", "POST"));
            assertEquals(403, preflight.statusCode(), preflight.body());
            assertTrue(preflight.body().contains("http.cors-origins"), preflight.body());
            assertEquals("", preflight.header("Access-Control-Allow-Origin"));

            // Sent by a page without asking first (fetch in no-cors mode, a body of no content type).
            Reply post = server.send(withOrigin(post(server, EVENT, null), PAGE));
            assertEquals(403, post.statusCode(), post.body());
            assertTrue(server.topic("cors").isEmpty(), "nothing was published");
            assertEquals(403, server.send(withOrigin(new HttpGet(server.uri("/eventhandler/echo")), PAGE)).statusCode());

            assertEquals(200, server.send(post(server, EVENT, "application/json")).statusCode(), "no Origin: no browser");
            String self = "http://127.0.0.1:" + server.port();
            assertEquals(200, server.send(withOrigin(post(server, EVENT, "application/json"), self)).statusCode(),
                    "a page of the server's own origin");
        }
    }

    @Test
    void anAllowedOriginGetsPreflightsAnsweredAndItsHeadersOnEveryAnswer() throws Exception {
        try (TestServer server = TestServer.start("http.cors-origins", PAGE + ", https://hmi.example:8443",
                "subscriber.max-count", "1")) {
            for (String path : new String[] {"/eventhandler/publish", "/eventhandler/events",
                    "/eventhandler/mgmt/subscriptions/5", "/metrics"}) {
                Reply preflight = server.send(preflight(server, path, "POST"));
                assertEquals(204, preflight.statusCode(), path + ": " + preflight.body());
                assertAllowed(preflight, PAGE);
                assertTrue(preflight.header("Access-Control-Allow-Methods").contains("POST"));
                for (String header : new String[] {"Content-Type", "Last-Event-ID", "Idempotency-Key"}) {
                    assertTrue(preflight.header("Access-Control-Allow-Headers").contains(header), header);
                }
                assertTrue(Integer.parseInt(preflight.header("Access-Control-Max-Age")) > 0);
            }
            HttpOptions privateNetwork = preflight(server, "/eventhandler/events", "GET");
            privateNetwork.setHeader("Access-Control-Request-Private-Network", "true");
            assertEquals("true", server.send(privateNetwork).header("Access-Control-Allow-Private-Network"));

            Reply published = server.send(withOrigin(post(server, EVENT, "application/json"), PAGE));
            assertEquals(200, published.statusCode(), published.body());
            assertAllowed(published, PAGE);
            assertTrue(published.header("Access-Control-Expose-Headers").contains("Retry-After"));
            Reply invalid = server.send(withOrigin(post(server, "{\"payload\":\"p\"}", "application/json"), PAGE));
            assertEquals(400, invalid.statusCode());
            assertAllowed(invalid, PAGE);
            Reply echo = server.send(withOrigin(new HttpGet(server.uri("/eventhandler/echo")), "https://hmi.example:8443"));
            assertEquals(200, echo.statusCode());
            assertAllowed(echo, "https://hmi.example:8443");
            Reply notFound = server.send(withOrigin(new HttpGet(server.uri("/eventhandler/nothing")), PAGE));
            assertEquals(404, notFound.statusCode());
            assertAllowed(notFound, PAGE);

            try (SseStream stream = server.subscribe("?eventType=cors", "Origin", PAGE)) {
                assertEquals(200, stream.response().statusCode());
                assertEquals(PAGE, stream.response().headers().firstValue("Access-Control-Allow-Origin").orElse(""));
                assertEquals("Retry-After", stream.response().headers()
                        .firstValue("Access-Control-Expose-Headers").orElse(""));
                // The subscriber limit (1) is reached: the refusal is readable by the page too, and says when to retry.
                Reply refused = server.send(withOrigin(new HttpGet(server.uri("/eventhandler/events?eventType=cors")),
                        PAGE));
                assertAllowed(refused, PAGE);
                assertFalse(refused.header("Retry-After").isEmpty(), refused.body());
            }
            Reply badStream = server.send(withOrigin(new HttpGet(server.uri("/eventhandler/events")), PAGE));
            assertEquals(400, badStream.statusCode());
            assertAllowed(badStream, PAGE);

            Reply other = server.send(withOrigin(post(server, EVENT, "application/json"), "http://other.example"));
            assertEquals(403, other.statusCode());
            assertEquals("", other.header("Access-Control-Allow-Origin"));
        }
    }

    @Test
    void aStarAllowsEveryOrigin() {
        try (TestServer server = TestServer.start("http.cors-origins", "*")) {
            Reply preflight = server.send(preflight(server, "/eventhandler/publish", "POST"));
            assertEquals(204, preflight.statusCode());
            assertEquals("*", preflight.header("Access-Control-Allow-Origin"));
            Reply published = server.send(withOrigin(post(server, EVENT, "application/json"), "http://any.example"));
            assertEquals(200, published.statusCode());
            assertEquals("*", published.header("Access-Control-Allow-Origin"));
        }
    }

    /** A preflight is answered on the selector thread: it needs no worker, even when none is free. */
    @Test
    void aPreflightIsAnsweredWhileEveryWorkerIsBusy() throws Exception {
        try (TestServer server = TestServer.start("http.cors-origins", PAGE, "server.worker-threads", "1",
                "server.worker-queue", "0", "subscriber.write-mode", "publisher-thread",
                // Long enough to hold the worker through the preflight (it is held once a publish has waited 1 s),
                // short enough not to hold the server's stop at the test's end: that took the whole 60 s before.
                "subscriber.write-timeout-seconds", "15");
             RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=held", 4096)) {
            stalled.awaitText(":ok", 5_000);
            try (BusyWorker busy = BusyWorker.occupy(server, "held")) {
                assertEquals(204, server.send(preflight(server, "/eventhandler/publish", "POST")).statusCode());
                assertTrue(busy.stillBusy(), "the only worker was busy all along");
            }
        }
    }

    @Test
    void anOriginWithAPathIsAConfigurationError() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("http.cors-origins", "http://page.example/app")));
        assertTrue(e.getMessage().contains("'http.cors-origins'"), e.getMessage());
    }

    private static void assertAllowed(Reply reply, String origin) {
        assertEquals(origin, reply.header("Access-Control-Allow-Origin"), reply.body());
        assertTrue(reply.header("Vary").contains("Origin"), "Vary: " + reply.header("Vary"));
    }

    private static HttpOptions preflight(TestServer server, String path, String method) {
        HttpOptions options = new HttpOptions(server.uri(path));
        options.setHeader("Origin", PAGE);
        options.setHeader("Access-Control-Request-Method", method);
        options.setHeader("Access-Control-Request-Headers", "content-type, idempotency-key");
        return options;
    }

    private static HttpPost post(TestServer server, String json, String contentType) {
        HttpPost post = new HttpPost(server.uri("/eventhandler/publish"));
        post.setEntity(new ByteArrayEntity(json.getBytes(StandardCharsets.UTF_8),
                contentType == null ? null : ContentType.parse(contentType)));
        return post;
    }

    private static <T extends HttpUriRequestBase> T withOrigin(T request, String origin) {
        request.setHeader("Origin", origin);
        return request;
    }
}

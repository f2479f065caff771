package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SecureCloud;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The secure mode over real mutual TLS: each caller is a client with its own certificate from the
 * {@link TestPki}, against one server with an ACL file.
 */
class SecureModeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ACL = """
            # who may publish what
            publish   publisher temperature Pressure
            publish   *         public
            subscribe subscriber temperature public   # a trailing comment
            subscribe *         announcements
            publish   other     announcements
            """;

    @TempDir
    static Path dir;
    private static SecureCloud cloud;
    private static TestPki pki;
    private static TestServer server;
    private static TestClient publisher;
    private static TestClient subscriber;
    private static TestClient sysop;
    private static TestClient other;

    @BeforeAll
    static void start() throws Exception {
        cloud = SecureCloud.start(dir, ACL);
        pki = cloud.pki();
        server = cloud.server();
        publisher = cloud.client("publisher");
        subscriber = cloud.client("subscriber");
        sysop = cloud.client("sysop");
        other = cloud.client("other");
    }

    @AfterAll
    static void stop() {
        cloud.close();
    }

    private static String event(String type, String source) {
        return "{\"eventType\":\"" + type + "\",\"payload\":\"p\""
                + (source == null ? "" : ",\"source\":{\"systemName\":\"" + source + "\"}") + "}";
    }

    private static void assertRefused(int status, String reason, Reply reply) throws Exception {
        assertEquals(status, reply.statusCode(), reply.body());
        JsonNode error = JSON.readTree(reply.body());
        assertEquals("AUTH", error.path("exceptionType").asText(), reply.body());
        assertEquals(status, error.path("errorCode").asInt(), reply.body());
        assertTrue(error.path("errorMessage").asText().contains(reason), reply.body());
    }

    @Test
    void servesHttpsOnly() {
        assertEquals("https", server.server().baseUri().getScheme());
    }

    @Test
    void publisherPublishesAsItselfAndTheSubscriberReceivesOverTls() throws Exception {
        try (SseStream stream = subscriber.subscribe("?eventType=temperature")) {
            Reply reply = publisher.post("/eventhandler/publish", event("temperature", "Publisher"));
            assertEquals(200, reply.statusCode(), reply.body());
            SseStream.Frame frame = stream.nextEvent(WAIT);
            assertEquals("temperature", frame.event());
            assertTrue(frame.data().contains("\"systemName\":\"Publisher\""), frame.data());
        }
    }

    @Test
    void publishingAsAnotherSystemIsForbidden() throws Exception {
        assertRefused(403, "source.systemName is 'subscriber' but the client certificate names 'publisher'",
                publisher.post("/eventhandler/publish", event("temperature", "subscriber")));
    }

    @Test
    void publishingWithoutSourceIsForbidden() throws Exception {
        assertRefused(403, "source.systemName must be 'publisher'",
                publisher.post("/eventhandler/publish", event("temperature", null)));
    }

    @Test
    void aBatchWithOneEventOfAnotherSystemIsRefusedWhole() throws Exception {
        try (SseStream stream = subscriber.subscribe("?eventType=public")) {
            assertRefused(403, "event 1: source.systemName is 'other'", publisher.post("/eventhandler/publish/batch",
                    "[" + event("public", "publisher") + "," + event("public", "other") + "]"));
            Reply accepted = publisher.post("/eventhandler/publish/batch",
                    "[" + event("public", "publisher") + "," + event("temperature", "publisher") + "]");
            assertEquals(200, accepted.statusCode(), accepted.body());
            // The refused batch's first event was never published: the first event to arrive is the accepted one.
            long firstAccepted = JSON.readTree(accepted.body()).path("ids").get(0).asLong();
            assertEquals(Long.toString(firstAccepted), stream.nextEvent(WAIT).id());
        }
    }

    @Test
    void theAclDecidesWhichTypesASystemMayPublish() throws Exception {
        assertRefused(403, "system 'publisher' may not publish events of type 'humidity' (security.acl-file)",
                publisher.post("/eventhandler/publish", event("humidity", "publisher")));
        assertEquals(200, publisher.post("/eventhandler/publish", event("PRESSURE", "publisher")).statusCode());
        assertEquals(200, other.post("/eventhandler/publish", event("public", "other")).statusCode());
        assertRefused(403, "may not publish events of type 'temperature'",
                other.post("/eventhandler/publish", event("temperature", "other")));
    }

    @Test
    void theAclDecidesWhichTypesASystemMaySubscribeTo() throws Exception {
        assertRefused(403, "system 'subscriber' may not subscribe to events of type 'pressure'",
                subscriber.get("/eventhandler/events?eventType=temperature&eventType=pressure"));
        assertRefused(403, "system 'other' may not subscribe to events of type 'temperature'",
                other.get("/eventhandler/events?eventType=temperature"));
        try (SseStream stream = other.subscribe("?eventType=announcements")) {
            assertEquals(200, other.post("/eventhandler/publish", event("announcements", "other")).statusCode());
            assertEquals("announcements", stream.nextEvent(WAIT).event());
        }
    }

    @Test
    void managementIsForSysopOnly() throws Exception {
        // sysop's 200 shows that the caller the front handler attaches reaches Jersey as a request property.
        assertEquals(200, sysop.get("/eventhandler/mgmt/topics").statusCode());
        assertRefused(403, "the management endpoints are for 'sysop' only, not for 'publisher'",
                publisher.get("/eventhandler/mgmt/topics"));
        assertRefused(403, "for 'sysop' only", subscriber.get("/eventhandler/mgmt/events"));
        assertRefused(403, "for 'sysop' only", other.get("/eventhandler/mgmt/health"));
        assertRefused(403, "for 'sysop' only", publisher.get("/eventhandler/mgmt/subscriptions/1/dead-letters"));
        assertRefused(403, "for 'sysop' only",
                subscriber.post("/eventhandler/mgmt/subscriptions/1/dead-letters/redeliver", ""));
        assertRefused(403, "for 'sysop' only", other.post("/eventhandler/mgmt/subscriptions/1/resume", ""));
        // The store is off in this server: sysop gets past the rule to the resource's own answer.
        assertEquals(404, sysop.get("/eventhandler/mgmt/events").statusCode());
        assertEquals(404, sysop.get("/eventhandler/mgmt/subscriptions/1/dead-letters").statusCode());
        assertEquals(200, sysop.get("/eventhandler/mgmt/health").statusCode());
    }

    @Test
    void echoAndMetricsAreOpenToAnyTrustedCertificate() {
        Reply echo = other.get("/eventhandler/echo");
        assertEquals(200, echo.statusCode());
        assertEquals("Got it!", echo.body());
        assertEquals(200, subscriber.get("/metrics").statusCode());
    }

    @Test
    void aClientWithoutCertificateFailsTheHandshake() {
        try (TestClient anonymous = server.client(pki.trustOnly())) {
            assertThrows(UncheckedIOException.class, () -> anonymous.get("/eventhandler/echo"));
        }
    }

    @Test
    void aCertificateOfAnUnknownCaFailsTheHandshake() {
        // Its CN is the publisher's, but no CA the server trusts signed it.
        try (TestClient intruder = server.client(pki.intruderContext())) {
            assertThrows(UncheckedIOException.class,
                    () -> intruder.post("/eventhandler/publish", event("temperature", "publisher")));
        }
    }

    @Test
    void aTrustedCertificateWithoutCnHasNoIdentity() throws Exception {
        try (TestClient nameless = server.client(pki.context(TestPki.NAMELESS))) {
            assertRefused(401, "no identity", nameless.post("/eventhandler/publish", event("public", "x")));
            assertRefused(401, "no identity", nameless.get("/eventhandler/events?eventType=announcements"));
            assertRefused(401, "no identity", nameless.get("/eventhandler/mgmt/topics"));
        }
    }

    @Test
    void aPlainHttpClientGetsNoAnswer() {
        try (TestClient plain = new TestClient(server.uri("/").resolve("http://127.0.0.1:" + server.port() + "/"),
                null)) {
            assertThrows(UncheckedIOException.class, () -> plain.get("/eventhandler/echo"));
        }
    }
}

package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.api.TlsContext;
import eu.arrowhead.eventhandler.testing.ReadmeSnippet;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The publisher against the Event Handler in secure mode, over mutual TLS with the {@link TestPki}'s certificates. */
class TlsTest {
    private static TestPki pki;
    private static TestServer server;

    @BeforeAll
    static void start() {
        pki = TestPki.get();
        server = TestServer.start(pki.context("sysop"), pki.serverSettings());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static EventPublishRequest event(String source) {
        return new EventPublishRequest("secure", "over TLS", null, SystemRequest.named(source), null);
    }

    private static EventPublisher publisher(SSLContext context) {
        return EventPublisher.builder(server.server().baseUri()).sslContext(context).build();
    }

    @Test
    void theReadmeShowsTheSecureExampleAsItIs() throws Exception {
        ReadmeSnippet.assertInReadme(Path.of("src/test/java/eu/arrowhead/eventhandler/publisher/TlsTest.java"),
                "secure-publisher");
    }

    @Test
    void publishesAsTheSystemItsCertificateNames() throws Exception {
        Path keyStore = pki.keyStore("publisher");
        Path trustStore = pki.trustStore();
        String password = TestPki.PASSWORD;
        URI eventHandler = server.server().baseUri();
        try (TestClient subscriber = server.client(pki.context("subscriber"));
             SseStream stream = subscriber.subscribe("?eventType=temperature")) {
            // README:begin secure-publisher
            SSLContext tls = TlsContext.fromPkcs12(keyStore, password, null, trustStore, password);
            try (EventPublisher publisher = EventPublisher.builder(eventHandler) // https://...
                    .sslContext(tls)
                    .source(SystemRequest.named("publisher")) // the name in the certificate's CN
                    .build()) {
                long id = publisher.publish(EventPublishRequest.of("temperature", "21.5"));
                // README:end secure-publisher
                assertEquals(Long.toString(id), stream.nextEvent(Duration.ofSeconds(30)).id());
            }
        }
    }

    @Test
    void anotherSystemsNameIsRefusedForGood() {
        try (EventPublisher publisher = publisher(pki.context("other"))) {
            PublishException e = assertThrows(PublishException.class, () -> publisher.publish(event("publisher")));
            assertEquals(403, e.statusCode());
            assertFalse(e.retryable());
            ErrorMessage error = e.errorMessage().orElseThrow();
            assertEquals("AUTH", error.exceptionType());
            assertTrue(error.errorMessage().contains("the client certificate names 'other'"), error.errorMessage());
        }
    }

    @Test
    void withoutAClientCertificateTheServerRefusesTheConnection() {
        try (EventPublisher publisher = EventPublisher.builder(server.server().baseUri())
                .sslContext(pki.trustOnly())
                .retryPolicy(RetryPolicy.of(2, Duration.ofMillis(10), Duration.ofMillis(10)))
                .build()) {
            PublishException e = assertThrows(PublishException.class, () -> publisher.publish(event("publisher")));
            assertEquals(0, e.statusCode(), e.getMessage());
        }
    }

    @Test
    void untrustedServerIsAFinalFailure() {
        // No sslContext: the JVM's default trust store, which does not know the test cloud's CA.
        try (EventPublisher publisher = EventPublisher.builder(server.server().baseUri())
                .retryPolicy(RetryPolicy.of(5, Duration.ofSeconds(10), Duration.ofSeconds(10)))
                .build()) {
            PublishException e = assertThrows(PublishException.class, () -> publisher.publish(event("publisher")));
            assertEquals(0, e.statusCode());
            assertFalse(e.retryable(), "a certificate that is not trusted will not be trusted on a retry");
            assertTrue(e.getMessage().contains(": TLS handshake failed: "), e.getMessage());
        }
    }

    @Test
    void sslContextNeedsAnHttpsUri() throws Exception {
        EventPublisher.Builder builder = EventPublisher.builder(URI.create("http://127.0.0.1:8455"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder.sslContext(SSLContext.getDefault()).build());
        assertEquals("an sslContext is set, but baseUri is not https: http://127.0.0.1:8455", e.getMessage());
    }
}

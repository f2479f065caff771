package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.TlsContext;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The subscriber against the Event Handler in secure mode, over mutual TLS with the {@link TestPki}'s
 * certificates; the server's ACL lets only {@code subscriber} subscribe to temperature.
 */
class TlsTest {
    @TempDir
    static Path dir;
    private static TestPki pki;
    private static TestServer server;

    @BeforeAll
    static void start() throws IOException {
        pki = TestPki.get();
        Path acl = Files.writeString(dir.resolve("acl"), "subscribe subscriber temperature\npublish publisher *\n");
        server = TestServer.start(pki.context("publisher"), pki.serverSettings("security.acl-file", acl.toString()));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void receivesEventsAsTheSystemItsCertificateNames() throws Exception {
        SSLContext context = TlsContext.fromPkcs12(pki.keyStore("subscriber"), TestPki.PASSWORD, null,
                pki.trustStore(), TestPki.PASSWORD);
        Recorder recorder = new Recorder();
        try (EventSubscriber subscriber = recorder.builder(server.server().baseUri()).sslContext(context).subscribe()) {
            recorder.awaitConnects(1);
            assertEquals(200, server.post("/eventhandler/publish", "{\"eventType\":\"temperature\",\"payload\":\"21\","
                    + "\"source\":{\"systemName\":\"publisher\"}}").statusCode());
            recorder.awaitEvents(1);
            assertEquals(List.of("21"), recorder.payloads());
        }
    }

    @Test
    void aSystemTheAclDoesNotAllowIsRefusedForGood() throws Exception {
        Recorder recorder = new Recorder();
        try (EventSubscriber subscriber = recorder.builder(server.server().baseUri())
                .sslContext(pki.context("other")).subscribe()) {
            recorder.awaitThreadEnd();
            SubscriptionRefusedException refused = assertInstanceOf(SubscriptionRefusedException.class,
                    recorder.stopCauses.get(0));
            assertEquals(403, refused.statusCode());
            assertEquals("HTTP 403: system 'other' may not subscribe to events of type 'temperature'"
                    + " (security.acl-file)", refused.getMessage());
            assertEquals("AUTH", refused.errorMessage().orElseThrow().exceptionType());
            assertEquals(0, recorder.connects.get());
        }
    }

    @Test
    void withoutAClientCertificateTheConnectionFails() throws Exception {
        Recorder recorder = new Recorder();
        try (EventSubscriber subscriber = recorder.builder(server.server().baseUri())
                .sslContext(pki.trustOnly()).subscribe()) {
            recorder.awaitDisconnects(1);
            assertInstanceOf(IOException.class, recorder.disconnects.get(0));
            assertTrue(!(recorder.disconnects.get(0) instanceof SubscriptionRefusedException),
                    "refused in the TLS handshake, before any HTTP answer: " + recorder.disconnects.get(0));
            assertEquals(0, recorder.connects.get());
        }
    }
}

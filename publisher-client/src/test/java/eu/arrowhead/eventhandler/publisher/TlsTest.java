package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/**
 * The publisher over mutual TLS. The server does not speak TLS yet, so a TLS terminator that requires a
 * client certificate stands in front of the real server, as a reverse proxy would.
 *
 * <p>The key stores in {@code src/test/resources/tls} (password {@code changeit}, valid for 100 years) were
 * made with {@code keytool -genkeypair -keyalg EC -groupname secp256r1 -validity 36500}: {@code server.p12}
 * for {@code CN=eventhandler.test} with {@code SAN=dns:localhost,ip:127.0.0.1}, {@code client.p12} for
 * {@code CN=sensor-1}, and {@code trust.p12} holding both certificates.
 */
class TlsTest {
    private static final char[] PASSWORD = "changeit".toCharArray();

    @Test
    void publishesOverMutualTls() throws Exception {
        try (TestServer server = TestServer.start();
             TlsTerminator tls = new TlsTerminator(context("server.p12"), server.port());
             SseStream stream = server.subscribe("?eventType=secure");
             EventPublisher publisher = EventPublisher.builder(URI.create("https://127.0.0.1:" + tls.port()))
                     .sslContext(context("client.p12"))
                     .build()) {
            long id = publisher.publish(EventPublishRequest.of("secure", "over TLS"));
            assertEquals(Long.toString(id), stream.nextEvent(Duration.ofSeconds(30)).id());
        }
    }

    @Test
    void untrustedServerIsAFinalFailure() throws Exception {
        try (TestServer server = TestServer.start();
             TlsTerminator tls = new TlsTerminator(context("server.p12"), server.port());
             EventPublisher publisher = EventPublisher.builder(URI.create("https://127.0.0.1:" + tls.port()))
                     .retryPolicy(RetryPolicy.of(5, Duration.ofSeconds(10), Duration.ofSeconds(10)))
                     .build()) {
            PublishException e = assertThrows(PublishException.class,
                    () -> publisher.publish(EventPublishRequest.of("secure", "x")));
            assertEquals(0, e.statusCode());
            assertFalse(e.retryable(), "a certificate that is not trusted will not be trusted on a retry");
            assertTrue(e.getMessage().contains(": TLS handshake failed: "), e.getMessage());
        }
    }

    @Test
    void sslContextNeedsAnHttpsUri() {
        EventPublisher.Builder builder = EventPublisher.builder(URI.create("http://127.0.0.1:8455"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder.sslContext(SSLContext.getDefault()).build());
        assertEquals("an sslContext is set, but baseUri is not https: http://127.0.0.1:8455", e.getMessage());
    }

    /** A context with the key of {@code keyStore} that trusts the certificates in {@code trust.p12}. */
    private static SSLContext context(String keyStore) throws IOException, GeneralSecurityException {
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(load(keyStore), PASSWORD);
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(load("trust.p12"));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
        return context;
    }

    private static KeyStore load(String name) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = TlsTest.class.getResourceAsStream("/tls/" + name)) {
            store.load(in, PASSWORD);
        }
        return store;
    }

    /** Accepts TLS connections that present a trusted client certificate and relays them to a plain port. */
    private static final class TlsTerminator implements AutoCloseable {
        private final SSLServerSocket listener;

        TlsTerminator(SSLContext context, int targetPort) throws IOException {
            listener = (SSLServerSocket) context.getServerSocketFactory()
                    .createServerSocket(0, 50, InetAddress.getLoopbackAddress());
            listener.setNeedClientAuth(true);
            daemon("tls-accept", () -> {
                try {
                    while (true) {
                        Socket client = listener.accept();
                        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                        daemon("tls-in", () -> relay(client, target));
                        daemon("tls-out", () -> relay(target, client));
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
        }

        int port() {
            return listener.getLocalPort();
        }

        private static void relay(Socket from, Socket to) {
            try (from; to) {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException ended) {
                // one side went away (or the handshake failed): both are closed
            }
        }

        private static void daemon(String name, Runnable body) {
            Thread thread = new Thread(body, name);
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.NKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The link to NATS secured as docs/cluster.md has it: a nats-server that takes TLS only, requires a client
 * certificate its CA signed (mutual TLS) and knows the nodes by a user and password or an NKey, with the
 * documented permissions. A node with the right material joins; one without is refused at start with one line that
 * names the cause. One server serves every test of the class.
 */
class SecuredLinkTest {
    /** The permissions docs/cluster.md gives the nodes' NATS user: enough for everything a node does. */
    static final String NODE_PERMISSIONS = "permissions: {"
            + " publish: [\"eventhandler.events.>\", \"$JS.API.>\", \"$JS.ACK.>\", \"$JS.FC.>\", \"$KV.>\","
            + " \"_EH_NODE.>\", \"_EH_AUTHUPDATE.>\", \"_INBOX.>\"],"
            + " subscribe: [\"_INBOX.>\", \"_EH_NODE.>\", \"_EH_AUTHUPDATE.>\"] }";
    private static final String PASSWORD = "n0de-s3cret";
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    static Path directory;
    private static final TestPki PKI = TestPki.get();
    private static NatsCluster nats;
    private static Path seedFile;

    @BeforeAll
    static void startNats() throws Exception {
        NKey node = NKey.createUser(new SecureRandom());
        seedFile = Files.writeString(directory.resolve("node.nk"), new String(node.getSeed()) + "\n",
                StandardCharsets.US_ASCII);
        String config = "tls { " + PKI.natsServerTls() + " }\n"
                + "authorization { users: [\n"
                + "  { user: eventhandler, password: \"" + PASSWORD + "\", " + NODE_PERMISSIONS + " }\n"
                + "  { nkey: " + new String(node.getPublicKey()) + ", " + NODE_PERMISSIONS + " }\n"
                + "] }\n";
        nats = NatsCluster.start(directory, 1, new NatsCluster.Gate("tls", config,
                options -> options.sslContext(PKI.context(TestPki.SERVER)).userInfo("eventhandler", PASSWORD)));
    }

    @AfterAll
    static void stopNats() throws InterruptedException {
        if (nats != null) {
            nats.close();
        }
    }

    /** A node in insecure mode with its own TLS keys, the link's settings followed by {@code more}. */
    private static String[] node(String name, String... more) {
        List<String> settings = new ArrayList<>(List.of("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                "cluster.node-name", name, "cluster.timeout-seconds", "2",
                "cluster.tls-trust-store", PKI.trustStore().toString(),
                "cluster.tls-trust-store-password", TestPki.PASSWORD,
                "cluster.tls-key-store", PKI.keyStore(TestPki.SERVER).toString(),
                "cluster.tls-key-store-password", TestPki.PASSWORD));
        settings.addAll(List.of(more));
        return settings.toArray(String[]::new);
    }

    /** The one line a refused start logs after "not started: ". */
    private static String refusal(String... settings) {
        RuntimeException refused = assertThrows(RuntimeException.class, () -> TestServer.start(settings).close());
        Throwable cause = refused;
        while (!(cause instanceof IOException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        assertTrue(cause instanceof IOException, refused.toString());
        assertTrue(!cause.getMessage().contains(PASSWORD) && !cause.getMessage().contains("\n"), cause.getMessage());
        return cause.getMessage();
    }

    @Test
    void nodesWithTheRightMaterialJoinAndShareEvents() throws Exception {
        try (TestServer byPassword = TestServer.start(node("by-password", "cluster.user", "eventhandler",
                     "cluster.password", PASSWORD));
             TestServer byNKey = TestServer.start(node("by-nkey", "cluster.nkey-seed-file", seedFile.toString()));
             SseStream stream = byNKey.subscribe("?eventType=alarm")) {
            long id = byPassword.publish("alarm", "over mutual TLS");
            SseStream.Frame event = stream.nextEvent(WAIT);
            assertEquals(String.valueOf(id), event.id());
            assertTrue(event.data().contains("over mutual TLS"), event.data());
            // The node name check answers across the link too: a second by-nkey is refused.
            assertTrue(refusal(node("by-nkey", "cluster.nkey-seed-file", seedFile.toString()))
                    .contains("cluster.node-name by-nkey is in use by a running node"));
        }
    }

    @Test
    void aNodeWithoutTheCredentialsIsRefusedSayingWhy() {
        String urls = "cluster.nats-urls (" + nats.urls() + "): ";
        assertEquals(urls + "the NATS server requires credentials and the node has none (Authorization Violation);"
                + " set cluster.user and cluster.password, cluster.token, cluster.nkey-seed-file or"
                + " cluster.credentials-file", refusal(node("no-credentials")));
        assertEquals(urls + "the NATS server refused the node's credentials, cluster.user and cluster.password"
                + " (Authorization Violation)", refusal(node("wrong-password", "cluster.user", "eventhandler",
                "cluster.password", "guessed")));
        assertEquals(urls.replace("tls://", "nats://") + "the NATS server requires TLS, but the URLs are nats://;"
                + " use tls:// URLs",
                refusal("cluster.enabled", "true", "cluster.nats-urls", nats.urls().replace("tls://", "nats://"),
                        "cluster.timeout-seconds", "2", "cluster.user", "eventhandler", "cluster.password", PASSWORD));
    }

    @Test
    void aNodeWithoutTheRightCertificateIsRefusedSayingWhichSide() {
        String handshake = "cluster.nats-urls (" + nats.urls() + "): the TLS handshake with " + nats.urls()
                + " failed: ";
        String[] credentials = {"cluster.user", "eventhandler", "cluster.password", PASSWORD};
        assertEquals(handshake + "the NATS server requires a client certificate and the node presents none; set"
                        + " cluster.tls-key-store, or run in secure mode, whose key store is then presented",
                refusal(withoutKeyStore(node("no-certificate", credentials))));
        assertEquals(handshake + "the NATS server refused the node's certificate from cluster.tls-key-store "
                        + PKI.keyStore(TestPki.INTRUDER) + "; the NATS server's ca_file must hold the CA that"
                        + " signed it",
                refusal(replaced(node("intruder", credentials), "cluster.tls-key-store",
                        PKI.keyStore(TestPki.INTRUDER).toString())));
        assertEquals(handshake + "the node does not trust the NATS server's certificate (trust store:"
                        + " cluster.tls-trust-store " + PKI.intruderTrustStore() + "): unable to find valid"
                        + " certification path to requested target",
                refusal(replaced(node("distrustful", credentials), "cluster.tls-trust-store",
                        PKI.intruderTrustStore().toString())));
    }

    /**
     * A NATS server with a certificate the cloud's CA signed for another host: in secure mode the CA signs every
     * system of the cloud, so a certificate that does not name the URL's host is refused, as HTTPS does.
     */
    @Test
    void aNatsServerWhoseCertificateNamesAnotherHostIsRefused() throws Exception {
        String config = "tls { " + PKI.natsServerTlsNaming("elsewhere.example") + " }\n";
        try (NatsCluster impostor = NatsCluster.start(Files.createDirectories(directory.resolve("impostor")), 1, new NatsCluster.Gate("tls",
                config, options -> options.sslContext(PKI.context(TestPki.SERVER))))) {
            String url = impostor.urls();
            assertEquals("cluster.nats-urls (" + url + "): the TLS handshake with " + url + " failed: the node does"
                            + " not trust the NATS server's certificate (trust store: cluster.tls-trust-store "
                            + PKI.trustStore() + "): No subject alternative names matching IP address 127.0.0.1"
                            + " found",
                    refusal(replaced(node("misled"), "cluster.nats-urls", url)));
        }
    }

    private static String[] replaced(String[] settings, String key, String value) {
        String[] copy = settings.clone();
        for (int i = 0; i < copy.length; i += 2) {
            if (copy[i].equals(key)) {
                copy[i + 1] = value;
            }
        }
        return copy;
    }

    private static String[] withoutKeyStore(String[] settings) {
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < settings.length; i += 2) {
            if (!settings[i].startsWith("cluster.tls-key-store")) {
                kept.add(settings[i]);
                kept.add(settings[i + 1]);
            }
        }
        return kept.toArray(String[]::new);
    }

    @Test
    void theDocumentedPermissionsAreTheTestedOnes() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "cluster.md"), StandardCharsets.UTF_8);
        assertTrue(docs.replaceAll("\\s+", " ").contains(NODE_PERMISSIONS), "docs/cluster.md should give the"
                + " nodes' NATS user: " + NODE_PERMISSIONS);
    }
}

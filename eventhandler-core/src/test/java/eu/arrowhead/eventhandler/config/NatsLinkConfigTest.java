package eu.arrowhead.eventhandler.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys of the link to NATS: what a start refuses and what the defaults are in either mode. */
class NatsLinkConfigTest {
    private static final String SECURE = "server.ssl.enabled=true;server.ssl.key-store=/pki/node.p12;"
            + "server.ssl.key-store-password=k;server.ssl.trust-store=/pki/cloud.p12;server.ssl.trust-store-password=t";

    @TempDir
    Path directory;

    /** {@code settings}: key=value pairs separated by semicolons, in cluster mode. */
    private static NatsLinkConfig link(String settings) {
        Map<String, String> overrides = new HashMap<>(Map.of("cluster.enabled", "true"));
        for (String pair : settings.split(";")) {
            if (!pair.isEmpty()) {
                overrides.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
            }
        }
        return ConfigLoader.withOverrides(overrides).cluster().link();
    }

    private static void refused(String settings, String message) {
        ConfigException e = assertThrows(ConfigException.class, () -> link(settings));
        assertEquals(message, e.getMessage());
    }

    @Test
    void secureModeRefusesAPlaintextUrlUnlessTheNetworkIsSaidToBeTrusted() {
        refused(SECURE + ";cluster.nats-urls=nats://10.0.0.1:4222", "cluster.nats-urls=nats://10.0.0.1:4222 is"
                + " plaintext (nats://), but server.ssl.enabled=true: in secure mode the link to NATS is TLS, with"
                + " tls:// URLs (docs/cluster.md, \"A secured link\"); set cluster.allow-plaintext=true only if the"
                + " network between the nodes and the NATS servers is trusted");
        NatsLinkConfig trusted = link(SECURE + ";cluster.nats-urls=nats://10.0.0.1:4222;cluster.allow-plaintext=true");
        assertFalse(trusted.tls());
        refused("cluster.allow-plaintext=true", "cluster.allow-plaintext is set, but it cannot take effect:"
                + " server.ssl.enabled is false, where nats:// URLs are taken anyway");
        refused(SECURE + ";cluster.nats-urls=tls://10.0.0.1:4222;cluster.allow-plaintext=true",
                "cluster.allow-plaintext is set, but it cannot take effect: cluster.nats-urls are tls://");
    }

    @Test
    void secureModeDefaultsToTheNodesOwnKeyStoreAndTrustStore() {
        NatsLinkConfig link = link(SECURE + ";cluster.nats-urls=tls://10.0.0.1:4222,tls://10.0.0.2:4222");
        assertTrue(link.tls());
        assertEquals(Path.of("/pki/node.p12"), link.keyStore());
        assertEquals("k", link.keyStorePassword());
        assertEquals(Path.of("/pki/cloud.p12"), link.trustStore());
        assertEquals("t", link.trustStorePassword());
        assertEquals("server.ssl.trust-store /pki/cloud.p12", link.trustStoreWhence());
    }

    @Test
    void insecureModePresentsNoCertificateAndTrustsTheJvmsCas() {
        NatsLinkConfig link = link("cluster.nats-urls=tls://10.0.0.1:4222");
        assertNull(link.keyStore());
        assertNull(link.trustStore());
        assertEquals("the JVM's default CAs (cluster.tls-trust-store is empty)", link.trustStoreWhence());
        refused("cluster.nats-urls=nats://10.0.0.1:4222;cluster.tls-key-store=/pki/node.p12",
                "cluster.tls-key-store is set, but it cannot take effect: cluster.nats-urls are nats:// (plaintext);"
                        + " TLS to NATS takes tls:// URLs");
        refused("cluster.nats-urls=tls://10.0.0.1:4222,nats://10.0.0.2:4222", "cluster.nats-urls=tls://10.0.0.1:4222,"
                + "nats://10.0.0.2:4222 mixes tls:// and nats:// URLs: the link to every NATS server is either TLS or"
                + " not; use tls:// for all of them");
        refused("cluster.nats-urls=tls://10.0.0.1:4222;cluster.tls-trust-store=/no/such.p12", "configuration key"
                + " 'cluster.tls-trust-store' has the value '/no/such.p12'; that file does not exist or cannot be"
                + " read");
    }

    @Test
    void oneKindOfCredentialsAtMost() throws IOException {
        Path seed = Files.writeString(directory.resolve("node.nk"), "SU... (read at start, not here)\n");
        NatsLinkConfig user = link("cluster.user=eh;cluster.password=secret");
        assertEquals(NatsLinkConfig.Credentials.USER, user.credentials());
        assertEquals("eh", user.credentialValue());
        assertFalse(user.toString().contains("secret"), user.toString());
        assertEquals(NatsLinkConfig.Credentials.NKEY, link("cluster.nkey-seed-file=" + seed).credentials());
        assertEquals(NatsLinkConfig.Credentials.NONE, link("").credentials());
        refused("cluster.user=eh;cluster.password=secret;cluster.token=t0k", "the node has more than one kind of"
                + " NATS credentials: [cluster.user and cluster.password, cluster.token]; a NATS user authenticates"
                + " with one of them, so set only the one the NATS servers' authorization names");
        refused("cluster.user=eh", "cluster.user is set without cluster.password: a NATS user is a name and a"
                + " password");
        refused("cluster.password=secret", "cluster.password is set without cluster.user: a NATS user is a name"
                + " and a password");
    }

    @Test
    void secretsAreMaskedInTheLoggedConfiguration() {
        String described = ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.token", "t0k3n"))
                .describe();
        assertTrue(described.contains("cluster.token=****"), described);
        assertFalse(described.contains("t0k3n"), described);
        String user = ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.user", "eh",
                "cluster.password", "s3cret")).describe();
        assertTrue(user.contains("cluster.password=****") && user.contains("cluster.user=eh"), user);
    }

    @Test
    void theLinksKeysStopTheStartOutsideClusterMode() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("cluster.user", "eh", "cluster.password", "secret")));
        assertEquals("cluster.user is set, but it cannot take effect: cluster.enabled is false: this Event Handler"
                + " runs alone", e.getMessage());
    }
}

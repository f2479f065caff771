package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server refuses to start in secure mode with TLS material or an ACL it cannot use, saying why. */
class SecureStartTest {
    private final TestPki pki = TestPki.get();
    @TempDir
    Path dir;

    private String refusal(String... overrides) {
        return assertThrows(ConfigException.class, () -> TestServer.start(pki.serverSettings(overrides)).close())
                .getMessage();
    }

    @Test
    void aMissingKeyStore() {
        assertEquals("secure mode (server.ssl.*): the key store " + dir.resolve("none.p12") + " does not exist",
                refusal("server.ssl.key-store", dir.resolve("none.p12").toString()));
    }

    @Test
    void aWrongKeyStorePassword() {
        assertEquals("secure mode (server.ssl.*): the key store " + pki.keyStore(TestPki.SERVER)
                + " cannot be opened: wrong password", refusal("server.ssl.key-store-password", "wrong"));
    }

    @Test
    void aWrongTrustStorePassword() {
        assertEquals("secure mode (server.ssl.*): the trust store " + pki.trustStore()
                + " cannot be opened: wrong password", refusal("server.ssl.trust-store-password", "wrong"));
    }

    @Test
    void aWrongKeyPassword() {
        assertTrue(refusal("server.ssl.key-password", "wrong").contains("wrong key password"));
    }

    @Test
    void aFileThatIsNotPkcs12() throws Exception {
        Path text = Files.writeString(dir.resolve("trust.p12"), "not a key store");
        assertTrue(refusal("server.ssl.trust-store", text.toString())
                .startsWith("secure mode (server.ssl.*): the trust store " + text + " cannot be opened: "));
    }

    @Test
    void aBadAclFile() throws Exception {
        Path acl = Files.writeString(dir.resolve("acl"), "publish a t\npublish b\n");
        assertEquals(acl + " line 2: a rule is 'publish SYSTEM EVENT_TYPE...' (* for any system or event type)",
                refusal("security.acl-file", acl.toString()));
    }
}

package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.api.TlsContext;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.SecurityConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PublicKey;
import java.security.cert.Certificate;
import java.util.Collections;
import javax.net.ssl.SSLContext;
import org.glassfish.grizzly.ssl.SSLEngineConfigurator;

/**
 * The Event Handler's TLS material in secure mode: its own key and certificate
 * ({@code server.ssl.key-store}) and the CAs whose client certificates it trusts
 * ({@code server.ssl.trust-store}), both PKCS12.
 */
public final class TlsMaterial {
    private final SSLContext context;
    private final PublicKey publicKey;

    private TlsMaterial(SSLContext context, PublicKey publicKey) {
        this.context = context;
        this.publicKey = publicKey;
    }

    /**
     * Loads the key store and the trust store.
     *
     * @throws ConfigException naming the key and the file for a missing file, a wrong password or a file
     *                         that is not PKCS12: the server does not start without its certificate
     */
    public static TlsMaterial load(SecurityConfig config) {
        try {
            SSLContext context = TlsContext.fromPkcs12(Path.of(config.keyStore()), config.keyStorePassword(),
                    config.keyPassword(), Path.of(config.trustStore()), config.trustStorePassword());
            return new TlsMaterial(context, ownPublicKey(Path.of(config.keyStore()), config.keyStorePassword()));
        } catch (IOException e) {
            throw new ConfigException("secure mode (server.ssl.*): " + e.getMessage());
        }
    }

    /** The public key of the key store's first key entry: the one the TLS handshake presents. */
    private static PublicKey ownPublicKey(Path keyStore, String password) throws IOException {
        try (InputStream in = Files.newInputStream(keyStore)) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, password.toCharArray());
            for (String alias : Collections.list(store.aliases())) {
                Certificate certificate = store.getCertificate(alias);
                if (store.isKeyEntry(alias) && certificate != null) {
                    return certificate.getPublicKey();
                }
            }
        } catch (GeneralSecurityException e) {
            throw new IOException("the key store " + keyStore + " cannot be read: " + e.getMessage(), e);
        }
        throw new IOException("the key store " + keyStore + " holds no key with a certificate");
    }

    /** The Event Handler's public key, as registered in the Service Registry ({@code authenticationInfo}). */
    public PublicKey publicKey() {
        return publicKey;
    }

    /**
     * For the Event Handler's own calls to other systems (the Authorization system, the Service Registry,
     * push subscribers), with its own certificate as the client's.
     */
    public SSLContext context() {
        return context;
    }

    /**
     * The listener's TLS: server mode, a client without a trusted certificate is refused, and so is a client's
     * attempt to renegotiate (TLS 1.2; 1.3 has no renegotiation), which would let it make the server do a
     * handshake's work again and again on one connection. The JDK knows no per-engine switch: its property
     * holds for the whole JVM and is read at its first server handshake, so it is set here, before the
     * listener starts.
     */
    public SSLEngineConfigurator listenerConfig() {
        System.setProperty("jdk.tls.rejectClientInitiatedRenegotiation", "true");
        // Need only: JSSE keeps the last of need and want, and Grizzly sets want after need.
        return new SSLEngineConfigurator(context, false, true, false);
    }
}

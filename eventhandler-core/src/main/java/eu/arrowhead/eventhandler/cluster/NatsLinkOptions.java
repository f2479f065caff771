package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.api.TlsContext;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.NatsLinkConfig;
import io.nats.client.AuthHandler;
import io.nats.client.NKey;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts {@code cluster.*}'s TLS and credentials into the NATS client's options. Key material is read here, once, at
 * start: a file that cannot be used stops the start naming its key, before any NATS server is asked.
 */
final class NatsLinkOptions {
    private static final Logger LOG = LoggerFactory.getLogger(NatsLinkOptions.class);

    private NatsLinkOptions() {
    }

    /**
     * @return the TLS context of the link, or {@code null} for a plaintext one
     * @throws ConfigException naming the key whose file cannot be used
     */
    static SSLContext apply(NatsLinkConfig link, Options.Builder options) {
        SSLContext tls = link.tls() ? tls(link) : null;
        if (tls != null) {
            options.sslContext(tls);
            LOG.info("the link to NATS is TLS: the NATS servers' certificates are checked against {} and must name"
                    + " the host of their URL; the node's"
                    + " certificate: {}; credentials: {}", link.trustStoreWhence(), link.keyStoreWhence(),
                    credentials(link));
        } else {
            LOG.info("the link to NATS is plaintext (nats://); credentials: {}", credentials(link));
        }
        switch (link.credentials()) {
            case USER -> options.userInfo(link.credentialValue().toCharArray(), link.password().toCharArray());
            case TOKEN -> options.token(link.credentialValue().toCharArray());
            case NKEY -> options.authHandler(new SeedSignature(seed(Path.of(link.credentialValue()))));
            case CREDS_FILE -> options.authHandler(Nats.credentials(link.credentialValue()));
            case NONE -> {
                // the NATS servers ask for none, or refuse the node (RefusedLink says so)
            }
        }
        return tls;
    }

    /** Which keys, never what they hold. */
    private static String credentials(NatsLinkConfig link) {
        return link.credentials() == NatsLinkConfig.Credentials.NONE ? "none" : link.credentials().keys();
    }

    private static SSLContext tls(NatsLinkConfig link) {
        try {
            return ServerNameCheck.of(TlsContext.fromPkcs12(link.keyStore(), link.keyStorePassword(),
                    link.keyPassword(), link.trustStore(), link.trustStorePassword()));
        } catch (IOException e) {
            throw new ConfigException("the TLS link to NATS (key store: " + link.keyStoreWhence() + ", trust store: "
                    + link.trustStoreWhence() + "): " + e.getMessage());
        }
    }

    private static NKey seed(Path file) {
        try {
            NKey key = NKey.fromSeed(Files.readString(file, StandardCharsets.US_ASCII).strip().toCharArray());
            key.getPublicKey();
            return key;
        } catch (IOException | GeneralSecurityException | IllegalArgumentException | IllegalStateException e) {
            // The message of a bad seed could quote it: not repeated.
            throw new ConfigException("cluster.nkey-seed-file " + file + " holds no NKey user seed (one line"
                    + " starting with SU, as nk -gen user writes it)");
        }
    }

    /** Answers the NATS server's challenge with the seed's signature: the server knows the public key only. */
    private static final class SeedSignature implements AuthHandler {
        private final NKey key;

        SeedSignature(NKey key) {
            this.key = key;
        }

        @Override
        public byte[] sign(byte[] nonce) {
            try {
                return key.sign(nonce);
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException("cannot sign with the NKey seed of cluster.nkey-seed-file", e);
            }
        }

        @Override
        public char[] getID() {
            try {
                return key.getPublicKey();
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException("cannot read the NKey seed of cluster.nkey-seed-file", e);
            }
        }

        @Override
        public char[] getJWT() {
            return null;
        }
    }
}

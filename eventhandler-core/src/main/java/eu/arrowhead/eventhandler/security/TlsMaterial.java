package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.api.TlsContext;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.SecurityConfig;
import java.io.IOException;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;
import org.glassfish.grizzly.ssl.SSLEngineConfigurator;

/**
 * The Event Handler's TLS material in secure mode: its own key and certificate
 * ({@code server.ssl.key-store}) and the CAs whose client certificates it trusts
 * ({@code server.ssl.trust-store}), both PKCS12.
 */
public final class TlsMaterial {
    private final SSLContext context;

    private TlsMaterial(SSLContext context) {
        this.context = context;
    }

    /**
     * Loads the key store and the trust store.
     *
     * @throws ConfigException naming the key and the file for a missing file, a wrong password or a file
     *                         that is not PKCS12: the server does not start without its certificate
     */
    public static TlsMaterial load(SecurityConfig config) {
        try {
            return new TlsMaterial(TlsContext.fromPkcs12(Path.of(config.keyStore()), config.keyStorePassword(),
                    config.keyPassword(), Path.of(config.trustStore()), config.trustStorePassword()));
        } catch (IOException e) {
            throw new ConfigException("secure mode (server.ssl.*): " + e.getMessage());
        }
    }

    /** For the Event Handler's own calls to other systems (the Authorization system). */
    public SSLContext context() {
        return context;
    }

    /** The listener's TLS: server mode, and a client without a trusted certificate is refused. */
    public SSLEngineConfigurator listenerConfig() {
        // Need only: JSSE keeps the last of need and want, and Grizzly sets want after need.
        return new SSLEngineConfigurator(context, false, true, false);
    }
}

package eu.arrowhead.eventhandler.config;

import java.net.URI;
import java.time.Duration;

/**
 * Secure mode: mutual TLS, the access control list and the Arrowhead Authorization system. The keys are
 * documented in the {@code Security} section of {@code config/eventhandler.properties}.
 */
public record SecurityConfig(
        boolean sslEnabled,
        String keyStore,
        String keyStorePassword,
        String keyPassword,
        String trustStore,
        String trustStorePassword,
        String aclFile,
        boolean authorizationEnabled,
        URI authorizationUri,
        int authorizationStartRetries,
        Duration authorizationRetryInterval,
        Duration authorizationRecheckInterval) {

    static SecurityConfig from(ConfigValues v) {
        return new SecurityConfig(
                v.bool("server.ssl.enabled"),
                v.text("server.ssl.key-store"),
                v.text("server.ssl.key-store-password"),
                v.text("server.ssl.key-password"),
                v.text("server.ssl.trust-store"),
                v.text("server.ssl.trust-store-password"),
                v.text("security.acl-file"),
                v.bool("security.authorization.enabled"),
                v.httpUri("security.authorization.uri"),
                v.integer("security.authorization.start-retries", 0, 1_000_000),
                v.seconds("security.authorization.retry-seconds", 1),
                v.seconds("security.authorization.recheck-seconds", 0));
    }
}

package eu.arrowhead.eventhandler.config;

import java.net.URI;
import java.time.Duration;

/**
 * Registration of the Event Handler's services in the Arrowhead Service Registry. The keys are documented
 * in the {@code Arrowhead Service Registry} section of {@code config/eventhandler.properties}.
 */
public record ServiceRegistryConfig(
        boolean enabled,
        URI uri,
        String systemName,
        String systemAddress,
        Duration retryInterval,
        Duration timeout) {

    static ServiceRegistryConfig from(ConfigValues v) {
        return new ServiceRegistryConfig(
                v.bool("arrowhead.service-registry.enabled"),
                v.httpUri("arrowhead.service-registry.uri"),
                v.text("arrowhead.system-name"),
                v.text("arrowhead.system-address"),
                v.seconds("arrowhead.service-registry.retry-seconds", 1),
                v.seconds("arrowhead.service-registry.timeout-seconds", 1));
    }
}

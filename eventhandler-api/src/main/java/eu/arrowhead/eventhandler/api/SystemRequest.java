package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * An Arrowhead system as named in a request: the publisher of an event ({@code source}) or a subscriber.
 *
 * @param systemName         the system's name; the identity that filters and (in secure mode) authorization use
 * @param address            host name or IP address of the system, optional
 * @param port               the system's port, optional
 * @param authenticationInfo the system's public key in Arrowhead's encoding, optional
 * @param metadata           free-form key/value pairs describing the system, optional
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SystemRequest(
        String systemName,
        String address,
        Integer port,
        String authenticationInfo,
        Map<String, String> metadata) {

    /** A system known only by its name. */
    public static SystemRequest named(String systemName) {
        return new SystemRequest(systemName, null, null, null, null);
    }
}

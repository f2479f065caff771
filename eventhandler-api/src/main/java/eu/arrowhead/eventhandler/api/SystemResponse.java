package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * An Arrowhead system in a response (Arrowhead 4.x {@code SystemResponseDTO}). This Event Handler keeps no
 * system registry of its own, so {@code id}, {@code createdAt} and {@code updatedAt} are absent in what it
 * sends; they are kept when read.
 *
 * @param id                 the system's id in the Service Registry, optional
 * @param systemName         the system's name
 * @param address            host name or IP address
 * @param port               the system's port
 * @param authenticationInfo the system's public key, optional
 * @param metadata           free-form key/value pairs, optional
 * @param createdAt          optional
 * @param updatedAt          optional
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SystemResponse(
        Long id,
        String systemName,
        String address,
        Integer port,
        String authenticationInfo,
        Map<String, String> metadata,
        String createdAt,
        String updatedAt) {
}

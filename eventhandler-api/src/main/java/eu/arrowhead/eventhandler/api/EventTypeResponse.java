package eu.arrowhead.eventhandler.api;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An event type in a response (Arrowhead 4.x {@code EventTypeResponseDTO}). Event types have no rows of
 * their own here, so {@code id}, {@code createdAt} and {@code updatedAt} are absent in what this Event
 * Handler sends; they are kept when read.
 *
 * @param id            optional
 * @param eventTypeName the event type as subscribed
 * @param createdAt     optional
 * @param updatedAt     optional
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EventTypeResponse(Long id, String eventTypeName, String createdAt, String updatedAt) {
}

package eu.arrowhead.eventhandler.api;

/**
 * The answer to an accepted {@code POST /eventhandler/publish}.
 *
 * @param id the id the event was given in the global sequence
 */
public record PublishResponse(long id) {
}

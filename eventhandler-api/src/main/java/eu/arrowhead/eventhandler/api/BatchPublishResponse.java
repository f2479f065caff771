package eu.arrowhead.eventhandler.api;

import java.util.List;

/**
 * The answer to an accepted {@code POST /eventhandler/publish/batch}.
 *
 * @param ids the ids the events were given, in the order of the request; consecutive
 */
public record BatchPublishResponse(List<Long> ids) {
}

package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.topic.PublishKey;

/**
 * A keyed publish as the log keeps it beside its events: enough to answer a retry after a restart.
 *
 * @param key           the caller, the {@code Idempotency-Key} and the request's fingerprint
 * @param firstId       the first id the publish was given; a batch's ids are consecutive on a single node
 * @param count         how many events it published
 * @param createdMillis when its transaction was written, wall-clock milliseconds
 */
public record StoredKey(PublishKey key, long firstId, int count, long createdMillis) {
}

package eu.arrowhead.eventhandler.api;

/**
 * One topic as listed by {@code GET /eventhandler/mgmt/topics}.
 *
 * @param eventType   the topic's event type, lower case (topics are matched case-insensitively)
 * @param subscribers live SSE subscribers of the topic now
 * @param published   events published to the topic since the server started
 * @param delivered   event deliveries written to subscribers
 * @param dropped     event deliveries abandoned because a subscriber fell behind or went away
 */
public record TopicStats(String eventType, int subscribers, long published, long delivered, long dropped) {
}

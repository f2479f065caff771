package eu.arrowhead.eventhandler.api;

import java.util.List;

/**
 * What a redelivery of dead letters did. An event redelivered stays on the list until its subscriber takes it;
 * refused again for good, it is set aside again.
 *
 * @param redelivered the ids of the events sent again, in id order
 * @param notInLog    the ids of letters whose events the log no longer holds (retention deleted them): nothing
 *                    can send them again; they stay on the list until deleted
 */
public record RedeliveryResponse(List<Long> redelivered, List<Long> notInLog) {
}

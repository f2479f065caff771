package eu.arrowhead.eventhandler.api;

import java.util.List;

/**
 * What a redelivery of dead letters did. An event redelivered stays on the list until its subscriber takes it;
 * refused again for good, it is set aside again.
 *
 * @param redelivered   the ids of the events queued to be sent again, in id order
 * @param alreadyQueued the ids of events an earlier redelivery queued and that are not yet sent: sent once
 * @param notInLog      the ids of letters whose events the log no longer holds (retention deleted them): nothing
 *                      can send them again; they stay on the list until deleted
 * @param left          how many letters, after the last one queued, push.total-max-bytes had no room for now: they
 *                      stay listed, for a later redelivery
 */
public record RedeliveryResponse(List<Long> redelivered, List<Long> alreadyQueued, List<Long> notInLog, long left) {
}

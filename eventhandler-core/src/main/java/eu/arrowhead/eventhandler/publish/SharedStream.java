package eu.arrowhead.eventhandler.publish;

import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.util.List;

/**
 * Where a publish goes in cluster mode instead of this node's hub: the stream every node shares, whose
 * sequence gives the ids. Every node, this one too, delivers the events once it reads them from the stream.
 */
public interface SharedStream {

    /**
     * Appends the events, in order, and waits until the stream has them (with its replicas).
     *
     * @param scope          the caller (its name in secure mode), so that two systems' keys never meet
     * @param idempotencyKey the request's {@code Idempotency-Key}, or {@code null}: a repeat of the same request
     *                       within the stream's duplicate window gets the first one's ids
     * @param fingerprint    what tells a repeat from another request under the same key
     * @return the events' ids, in order (increasing, not always consecutive: other nodes' events may lie between)
     * @throws eu.arrowhead.eventhandler.protocol.UnavailableException if the stream cannot take them now (503)
     * @throws eu.arrowhead.eventhandler.protocol.RequestException         422 if the key named another request
     */
    long[] append(List<IncomingEvent> events, String scope, String idempotencyKey, long fingerprint);
}

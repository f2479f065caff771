package eu.arrowhead.eventhandler.publisher;

/**
 * The server stored none of a batch of queued events and may take them one at a time; thrown by
 * {@link NodePublisher#sendBatch(java.util.List, long)} to {@link PublishQueue}, never to an application.
 */
final class BatchRefused extends Exception {
    /** Why the server refused the batch, and so what the queue does with later ones. */
    enum Reason {
        /** No batch endpoint (404, 405: an Arrowhead 4.x Event Handler): no more batches. */
        NO_BATCH_ENDPOINT,
        /** More bytes or events than the server takes in one request (413, or its 400 naming the limit): smaller ones. */
        TOO_LARGE,
        /** An event the server refuses (400, 403, 408, 415): the others go on alone. */
        AN_EVENT_REFUSED
    }

    private final Reason reason;

    BatchRefused(Reason reason, PublishException refusal) {
        super(refusal.getMessage(), refusal, false, false);
        this.reason = reason;
    }

    static Reason reasonFor(PublishException refusal) {
        int status = refusal.statusCode();
        if (status == 404 || status == 405) {
            return Reason.NO_BATCH_ENDPOINT;
        }
        String message = refusal.getMessage();
        // A 413 that names the payload limit is one event too large, which goes on to be refused alone.
        if (status == 413 && !message.contains("publish.max-payload-bytes")
                || status == 400 && message.contains("publish.max-batch-events")) {
            return Reason.TOO_LARGE;
        }
        return Reason.AN_EVENT_REFUSED;
    }

    Reason reason() {
        return reason;
    }
}

package eu.arrowhead.eventhandler.bench;

import java.util.Arrays;
import java.util.stream.LongStream;

/**
 * What the publishers of a loop sent, by sequence number: when each event was sent and which id its
 * publish answered. Publisher {@code p} owns the sequence numbers {@code p * perPublisher} to
 * {@code (p + 1) * perPublisher - 1}, and is the only thread that writes them; they are read once every
 * publisher has finished.
 */
final class Sends {
    /** The id of an event whose broker gives none (the peers): only the payload's sequence number tells it. */
    static final long NO_ID = -1;

    private final int perPublisher;
    private final long[] sentNanos;
    private final long[] publishedIds;

    Sends(int publishers, int perPublisher) {
        this.perPublisher = perPublisher;
        this.sentNanos = new long[publishers * perPublisher];
        this.publishedIds = new long[sentNanos.length];
        // An event whose publish has not answered has no id yet.
        Arrays.fill(publishedIds, NO_ID);
    }

    int size() {
        return sentNanos.length;
    }

    int perPublisher() {
        return perPublisher;
    }

    /** The sequence number of publisher {@code publisher}'s {@code index}-th event. */
    int seq(int publisher, int index) {
        return publisher * perPublisher + index;
    }

    int publisherOf(int seq) {
        return seq / perPublisher;
    }

    /** Whether {@code seq} is one of the first {@code warmUp} events of its publisher. */
    boolean warmUp(int seq, int warmUp) {
        return seq % perPublisher < warmUp;
    }

    void sent(int seq, long nanos) {
        sentNanos[seq] = nanos;
    }

    void published(int seq, long id) {
        publishedIds[seq] = id;
    }

    long sentNanos(int seq) {
        return sentNanos[seq];
    }

    long publishedId(int seq) {
        return publishedIds[seq];
    }

    /** The ids the broker answered, in sequence order; none where it gives no ids. */
    long[] publishedIds() {
        return LongStream.of(publishedIds).filter(id -> id != NO_ID).toArray();
    }
}

package eu.arrowhead.eventhandler.config;

/**
 * How many connections that have sent part of a request's head, not all of it, the server holds at once, within
 * their share of the heap ({@link HeapBudget#incompleteHeads()}): the key {@code server.max-incomplete-heads},
 * derived from the maximum heap and {@code server.max-header-bytes} when it is 0. A head that arrives whole is a
 * request at once, charged to the parts that bound requests; this is what a head sent slowly, or half, costs.
 */
final class IncompleteHeadLimit {
    /**
     * Heap a connection holds once its request's head has begun, besides the head's bytes: measured with
     * {@code jcmd PID GC.class_histogram} on a {@code -Xmx64m} server before and after 2 000 connections that each
     * sent one byte (docs/reliability.md, issue 29): 12 KB each (Grizzly's request and response objects with their
     * header buffers, 5.3 KB of it in seven byte arrays). A connection that has sent nothing holds 1.5 KB.
     */
    static final long CONNECTION_BYTES = 12 * 1024;
    /** The same measure with 7.5 KB of head sent gave 25 KB: the head is held about twice, as read and as parsed. */
    private static final int HEAD_COPIES = 2;
    private static final int MOST = 10_000_000;

    private IncompleteHeadLimit() {
    }

    /** What one incomplete head is charged: its own objects and a head of {@code maxHeaderBytes}, twice. */
    static long bytesEach(int maxHeaderBytes) {
        return CONNECTION_BYTES + (long) HEAD_COPIES * maxHeaderBytes;
    }

    static int maxCount(ConfigValues v, HeapBudget heap, int maxHeaderBytes) {
        return v.countWithinShare("server.max-incomplete-heads", MOST, heap.incompleteHeads(),
                bytesEach(maxHeaderBytes), "the incomplete heads' 1/18", " or server.max-header-bytes", heap);
    }
}

package eu.arrowhead.eventhandler.config;

/**
 * How many connections the server waits on for a request's head at once, within their shares of the heap: silent
 * ones ({@link HeapBudget#silentConnections()}, the key {@code server.max-silent-connections}) and those with part
 * of a head sent ({@link HeapBudget#incompleteHeads()}, {@code server.max-incomplete-heads}), each derived from
 * the maximum heap when it is 0. A head that arrives whole is a request at once, charged to the parts that bound
 * requests; this is what a connection that sends nothing, or a head slowly or half, costs.
 */
final class WaitingConnectionLimits {
    /**
     * Heap a connection holds while it has sent nothing since it was accepted or since its last request: measured
     * with {@code jcmd PID GC.class_histogram} on a {@code -Xmx256m} server before and after 2 000 such connections
     * (docs/reliability.md, issue 29): 2.0 KB each from the accept (Grizzly's connection, its channel and key),
     * 4.4 KB kept alive after one request (its HTTP context stays with the connection). Charged the larger.
     */
    static final long SILENT_BYTES = 4608;
    /**
     * Heap a connection holds once its request's head has begun, besides the head's bytes: measured the same way
     * with connections that each sent one byte: 12 KB each (Grizzly's request and response objects with their
     * header buffers, 5.3 KB of it in seven byte arrays).
     */
    static final long HEAD_BEGUN_BYTES = 12 * 1024;
    /** The same measure with 7.5 KB of head sent gave 25 KB: the head is held about twice, as read and as parsed. */
    private static final int HEAD_COPIES = 2;
    private static final int MOST = 10_000_000;

    private WaitingConnectionLimits() {
    }

    /** What one incomplete head is charged: its own objects and a head of {@code maxHeaderBytes}, twice. */
    static long incompleteHeadBytes(int maxHeaderBytes) {
        return HEAD_BEGUN_BYTES + (long) HEAD_COPIES * maxHeaderBytes;
    }

    static int maxIncompleteHeads(ConfigValues v, HeapBudget heap, int maxHeaderBytes) {
        return v.countWithinShare("server.max-incomplete-heads", MOST, heap.incompleteHeads(),
                incompleteHeadBytes(maxHeaderBytes), "the incomplete heads' 1/19", " or server.max-header-bytes",
                heap);
    }

    static int maxSilent(ConfigValues v, HeapBudget heap) {
        return v.countWithinShare("server.max-silent-connections", MOST, heap.silentConnections(), SILENT_BYTES,
                "the silent connections' 1/19", "", heap);
    }
}

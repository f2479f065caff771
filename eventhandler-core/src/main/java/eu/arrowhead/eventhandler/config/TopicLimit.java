package eu.arrowhead.eventhandler.config;

/**
 * How many topics the server holds at once, within their share of the heap ({@link HeapBudget#topics()}): the key
 * {@code topic.max-count}, derived from the maximum heap when it is 0. A topic's replay window is charged to
 * {@code replay.total-max-bytes}; this is what the topic costs besides, even with nothing in its window and no
 * subscriber, which is what a flood of invented event types makes.
 */
final class TopicLimit {
    /**
     * Heap one topic holds besides its window's events, at the longest event type (255 characters): measured with
     * {@code jcmd PID GC.class_histogram} on a {@code -Xmx64m} server before and after publishing 10 000 new types
     * of 240 characters (docs/reliability.md): 536 bytes each (its broadcaster 88, window 56 and their empty deque,
     * subscriber list and array 72, the map's node and table slot 40, the key 280). Charged 576: the key of 255
     * characters and the map's table at its emptiest after a resize.
     */
    static final long TOPIC_BYTES = 576;
    /** The most topics a key may ask for, whatever the heap. */
    private static final int MOST = 10_000_000;

    private TopicLimit() {
    }

    static int maxCount(ConfigValues v, HeapBudget heap) {
        return v.countWithinShare("topic.max-count", MOST, heap.topics(), TOPIC_BYTES, "the topics' 1/19", "", heap);
    }
}

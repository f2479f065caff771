package eu.arrowhead.eventhandler.config;

/**
 * How many SSE subscribers the server holds and how far behind each may fall, within the heap: the keys
 * {@code subscriber.max-count}, {@code subscriber.queue-max-bytes} and
 * {@code subscriber.total-queue-max-bytes}, each derived from the maximum heap when it is 0.
 *
 * <p>Subscribers and their queues together get their share of the heap ({@link HeapBudget#subscribers()}).
 * Of that, the queues get {@code subscriber.total-queue-max-bytes} and the open streams the rest
 * ({@link #streamsHeapBytes}), which each stream is charged its estimated heap
 * from when it opens ({@link #STREAM_BASE_BYTES}, {@link #STREAM_HEADER_BYTES}): a client with long or
 * many request headers holds more heap, so it is charged more. A configuration that cannot hold within
 * that share stops the start: at the limit a subscriber must be refused, never meet an OutOfMemoryError.
 *
 * @param streamsHeapBytes what the open streams may be charged together
 */
public record SubscriberLimits(int maxCount, long streamsHeapBytes, long queueMaxBytes, long totalQueueMaxBytes) {
    /**
     * Heap an idle SSE stream holds besides its request headers: Grizzly's connection, request and response
     * state and our subscriber. Measured with {@code jcmd PID GC.class_histogram} on a server holding
     * 1 000 to 3 000 idle streams, see docs/reliability.md: 10.9 KiB (11 203 bytes) with 3 short headers,
     * 12.0 KiB with 93, 18.8 KiB with one of 8 000 bytes. Charged a little above that, and the header fields
     * that Grizzly holds until the response's headers are written (about 400 bytes each, then given back by
     * {@code OpenStreamRelease}) fit in the heap the subscribers' share leaves over.
     */
    public static final long STREAM_BASE_BYTES = 11_400;
    /**
     * Heap each request header holds for as long as its stream is open, besides its bytes: its separators in
     * the request's read buffer, which the request line keeps alive (measured too).
     */
    public static final long STREAM_HEADER_BYTES = 16;
    /** The least a stream is charged: one short header (HTTP/1.1 requires Host). */
    public static final long MIN_STREAM_BYTES = STREAM_BASE_BYTES + STREAM_HEADER_BYTES + 16;
    /** One subscriber's queue, by default: a quarter of all queues' bytes, at most this. */
    static final long QUEUE_MAX_BYTES_CAP = 16 << 20;

    static SubscriberLimits from(ConfigValues v, HeapBudget heap) {
        long subscribersHeap = heap.subscribers();
        long total = v.longInteger("subscriber.total-queue-max-bytes", 0, Long.MAX_VALUE);
        if (total == 0) {
            total = heap.subscriberQueues();
        }
        long streamsHeap = subscribersHeap - total;
        if (streamsHeap < MIN_STREAM_BYTES) {
            throw new ConfigException("configuration key 'subscriber.total-queue-max-bytes' (" + total
                    + ") leaves no room for subscribers in their share of the heap (" + mebibytes(subscribersHeap)
                    + "); lower it, set it to 0 to derive it from the heap, or raise -Xmx");
        }
        long perSubscriber = v.longInteger("subscriber.queue-max-bytes", 0, Long.MAX_VALUE);
        if (perSubscriber == 0) {
            perSubscriber = Math.min(QUEUE_MAX_BYTES_CAP, total / 4);
        } else if (perSubscriber > total) {
            throw new ConfigException("configuration key 'subscriber.queue-max-bytes' (" + perSubscriber
                    + ") is larger than what all queues together may hold, subscriber.total-queue-max-bytes ("
                    + total + ")");
        }
        long fits = Math.min(10_000_000, streamsHeap / MIN_STREAM_BYTES);
        long maxCount = v.integer("subscriber.max-count", 0, 10_000_000);
        if (maxCount == 0) {
            maxCount = fits;
        } else if (maxCount > fits) {
            throw new ConfigException("configuration key 'subscriber.max-count' (" + maxCount + ") cannot hold"
                    + " within the heap: at " + MIN_STREAM_BYTES + " bytes each, at least, " + mebibytes(streamsHeap)
                    + " (the subscribers' 7/19 of the " + heap.allPartsSaid()
                    + ", less subscriber.total-queue-max-bytes)"
                    + " holds " + fits + "; lower it, set it to 0 to derive it from the heap, or raise -Xmx");
        }
        return new SubscriberLimits((int) maxCount, streamsHeap, perSubscriber, total);
    }

    private static String mebibytes(long bytes) {
        return (bytes >> 20) + " MiB";
    }
}

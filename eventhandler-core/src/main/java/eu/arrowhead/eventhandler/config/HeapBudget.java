package eu.arrowhead.eventhandler.config;

/**
 * How the maximum heap is shared out among the parts that clients can make grow, in one place, so that
 * all of them at their limits at once still fit with the server's own objects and leave the collector room to
 * work. Each part's key derives its bound from its share when it is 0; a part set larger than
 * {@link #mostForOnePart()} stops the start, and so do parts set so large that together they take more than
 * {@link #allParts()}.
 *
 * <table>
 * <caption>shares of {@code Runtime.maxMemory()} (a little under {@code -Xmx})</caption>
 * <tr><th>part</th><th>share</th><th>bounded by</th></tr>
 * <tr><td>SSE streams and their queues</td><td>7/32</td><td>{@code subscriber.max-count},
 *     {@code subscriber.total-queue-max-bytes} (2/32 of it)</td></tr>
 * <tr><td>the store's write buffer</td><td>2/32</td><td>{@code store.buffer-bytes}</td></tr>
 * <tr><td>H2's page cache</td><td>1/32</td><td>set at start, unless {@code store.url} sets CACHE_SIZE</td></tr>
 * <tr><td>request bodies being received</td><td>1/32</td><td>503 past it</td></tr>
 * <tr><td>connections with a request's head begun, not whole</td><td>1/32</td><td>{@code server.max-incomplete-heads}
 *     ({@link IncompleteHeadLimit})</td></tr>
 * <tr><td>replay windows, all topics</td><td>2/32</td><td>{@code replay.total-max-bytes}</td></tr>
 * <tr><td>push subscriptions and their queues</td><td>2/32</td><td>{@code push.total-max-bytes}</td></tr>
 * <tr><td>topics</td><td>1/32</td><td>{@code topic.max-count} ({@link TopicLimit})</td></tr>
 * <tr><td>the server's own</td><td>10/32</td><td></td></tr>
 * <tr><td>the collector's room</td><td>5/32</td><td>what is left</td></tr>
 * </table>
 *
 * <p>The server's own share is what an idle server holds after a full collection, with the event store on
 * H2: 19.3 MiB at {@code -Xmx64m} (Jersey's and Hibernate's models, Grizzly, H2), which 10/32 of the 62 MiB
 * such a JVM reports just holds. That is why the smallest supported heap is 64 MiB. The parts once took all the
 * rest (issue 29): every part full at once left a live set of 62 of 64 MiB and a server that spent 85% of its time
 * collecting. Now they leave 5/32 free besides young objects: with the serial collector (as the Raspberry Pi
 * unit runs it) the old generation is 2/3 of the heap, and everything a share holds ends up there.
 *
 * @param maxHeapBytes the JVM's maximum heap
 */
public record HeapBudget(long maxHeapBytes) {
    private static final int PARTS = 32;

    /** The budget of this JVM's heap. */
    public static HeapBudget ofThisJvm() {
        return new HeapBudget(Runtime.getRuntime().maxMemory());
    }

    /** SSE streams and their queues together. */
    public long subscribers() {
        return parts(7);
    }

    /** SSE subscribers' queues, by default: 2 of the subscribers' 7 parts. */
    public long subscriberQueues() {
        return parts(2);
    }

    /** Events accepted and not yet written to the event store, by default. */
    public long storeBuffer() {
        return parts(2);
    }

    /** H2's page cache. */
    public long storeCache() {
        return parts(1);
    }

    /** Request bodies held at once, received or waiting for their handler. */
    public long requestBodies() {
        return parts(1);
    }

    /**
     * Connections that have sent part of a request's head, not all of it. Taken from the bodies'
     * share, which had two parts: thousands of connections that each sent a byte of a head once filled the heap.
     */
    public long incompleteHeads() {
        return parts(1);
    }

    /** Every topic's replay window together, by default. */
    public long replayWindows() {
        return parts(2);
    }

    /** Push subscriptions and the events queued for them, by default. */
    public long push() {
        return parts(2);
    }

    /** The topics themselves, without their windows' events: bounds {@code topic.max-count}. */
    public long topics() {
        return parts(1);
    }

    /** What all parts together may take: all but the server's own 10/32 and the collector's 5/32. */
    public long allParts() {
        return parts(17);
    }

    /** How {@link #allParts()} is said in messages. */
    public static String allPartsShare() {
        return "17/32";
    }

    /** The most a part may be set to: more than half the heap could not hold with everything else. */
    public long mostForOnePart() {
        return maxHeapBytes / 2;
    }

    private long parts(int thirtySeconds) {
        return maxHeapBytes / PARTS * thirtySeconds;
    }
}

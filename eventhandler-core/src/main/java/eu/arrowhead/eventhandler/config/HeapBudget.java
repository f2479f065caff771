package eu.arrowhead.eventhandler.config;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Locale;

/**
 * How the heap is shared out among the parts that clients can make grow, in one place, so that all of them at
 * their limits at once still fit beside the server's own objects and leave the collector room to work. Each
 * part's key derives its bound from its share when it is 0; a part set larger than {@link #mostForOnePart()}
 * stops the start, and so do parts set so large that together they take more than {@link #allParts()}.
 *
 * <p>Where the parts live: whatever a part holds for more than a moment (a stream, a queued event, a window, the
 * store's buffer) is promoted to the old generation, so the parts are shares of the old generation, not of the
 * heap. With the serial and parallel collectors' default ratio that is 2/3 of the heap (a smaller old generation
 * set with {@code -XX:NewRatio} is read from the JVM); other collectors are held to the same 2/3, their young
 * objects need the rest as well. Of the old generation the server keeps its own {@value #SERVER_OWN_MIB} MiB
 * (what an idle server with the H2 store holds after a full collection, 19.3 MiB at {@code -Xmx64m}: Jersey's and
 * Hibernate's models, Grizzly, H2) and the collector a quarter: the events that are promoted and die in queues,
 * windows and the store's buffer, H2's write buffers and its compaction's pages. The clients' parts get the
 * rest, in nineteenths:
 *
 * <table>
 * <caption>shares of the clients' parts ({@link #allParts()})</caption>
 * <tr><th>part</th><th>share</th><th>bounded by</th></tr>
 * <tr><td>SSE streams and their queues</td><td>7/19</td><td>{@code subscriber.max-count},
 *     {@code subscriber.total-queue-max-bytes} (2/19 of it)</td></tr>
 * <tr><td>the store's write buffer; in cluster mode the acknowledgements a node awaits from the stream</td>
 *     <td>2/19</td><td>{@code store.buffer-bytes}; {@code cluster.max-pending-acks}</td></tr>
 * <tr><td>H2's page cache</td><td>1/19</td><td>set at start, unless {@code store.url} sets CACHE_SIZE</td></tr>
 * <tr><td>request bodies being received</td><td>2/19</td><td>503 past it</td></tr>
 * <tr><td>connections with a request's head begun, not whole</td><td>1/19</td><td>{@code server.max-incomplete-heads}
 *     ({@link WaitingConnectionLimits})</td></tr>
 * <tr><td>connections that have sent nothing since accepted or since their last request</td><td>1/19</td>
 *     <td>{@code server.max-silent-connections} ({@link WaitingConnectionLimits})</td></tr>
 * <tr><td>replay windows, all topics</td><td>2/19</td><td>{@code replay.total-max-bytes}</td></tr>
 * <tr><td>push subscriptions and their queues</td><td>2/19</td><td>{@code push.total-max-bytes}</td></tr>
 * <tr><td>topics</td><td>1/19</td><td>{@code topic.max-count} ({@link TopicLimit})</td></tr>
 * </table>
 *
 * <p>Why a quarter for the collector (issue 29, docs/reliability.md, {@code EveryLimitAtOnceIT}): with every part
 * full at once on a {@code -Xmx64m} server and 60 KB events published as fast as the store takes them, what is
 * promoted and dies fills the old generation's free room about once a second, and each full collection stops the
 * server 50-65 ms. Shares of the whole heap (the parts 17/32, 33 MiB) left 47-51 MiB live, more than the old
 * generation's 43 MiB, so that every young collection was a full one: 65% of the time collecting. A fifth for the
 * collector (13 MiB of parts) took 7% and a bystander's p99 to 56-57 ms, a quarter (10 MiB) 4-5% and 28-49 ms, and
 * 2.6-2.8% and 15-43 ms once the store's compaction of H2's file went by commits, not every 10 s.
 *
 * @param maxHeapBytes       the JVM's maximum heap ({@code Runtime.maxMemory()}, a little under {@code -Xmx})
 * @param oldGenerationBytes what of it long-lived objects may fill
 */
public record HeapBudget(long maxHeapBytes, long oldGenerationBytes) {
    static final int SERVER_OWN_MIB = 20;
    private static final int UNITS = 19;

    /** The budget of this JVM's heap. */
    public static HeapBudget ofThisJvm() {
        long maxHeap = Runtime.getRuntime().maxMemory();
        long oldGeneration = maxHeap / 3 * 2;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            String name = pool.getName().toLowerCase(Locale.ROOT);
            long max = pool.getUsage().getMax();
            if (pool.getType() == MemoryType.HEAP && (name.contains("old") || name.contains("tenured")) && max > 0) {
                oldGeneration = Math.min(oldGeneration, max);
            }
        }
        return new HeapBudget(maxHeap, oldGeneration);
    }

    /** SSE streams and their queues together. */
    public long subscribers() {
        return units(7);
    }

    /** SSE subscribers' queues, by default: 2 of the subscribers' 7 units. */
    public long subscriberQueues() {
        return units(2);
    }

    /**
     * Events accepted and not yet written to the event store, by default; in cluster mode, which has no store, the
     * acknowledgements a node awaits from the stream.
     */
    public long storeBuffer() {
        return units(2);
    }

    /** H2's page cache. */
    public long storeCache() {
        return units(1);
    }

    /** Request bodies held at once, received or waiting for their handler. */
    public long requestBodies() {
        return units(2);
    }

    /**
     * Connections that have sent part of a request's head, not all of it: thousands of connections that each sent
     * a byte of a head once filled the heap.
     */
    public long incompleteHeads() {
        return units(1);
    }

    /**
     * Connections that have sent nothing since they were accepted or since their last request: 2-4.4 KB each, and
     * only the descriptors bounded them before (20 000 would hold 40-88 MB).
     */
    public long silentConnections() {
        return units(1);
    }

    /** Every topic's replay window together, by default. */
    public long replayWindows() {
        return units(2);
    }

    /** Push subscriptions and the events queued for them, by default. */
    public long push() {
        return units(2);
    }

    /** The topics themselves, without their windows' events: bounds {@code topic.max-count}. */
    public long topics() {
        return units(1);
    }

    /**
     * What all parts together may take: the old generation less the server's own and the collector's quarter. Below
     * the smallest supported heap (64 MiB) that would be next to nothing; a sixteenth of the heap is the least.
     */
    public long allParts() {
        long left = oldGenerationBytes - ((long) SERVER_OWN_MIB << 20) - oldGenerationBytes / 4;
        return Math.max(maxHeapBytes / 16, left);
    }

    /** How {@link #allParts()} is said in messages. */
    public String allPartsSaid() {
        return String.format(Locale.ROOT, "%.1f MiB (the old generation's %.1f MiB less the server's own %d MiB and a"
                + " quarter for the collector)", allParts() / 1048576.0, oldGenerationBytes / 1048576.0, SERVER_OWN_MIB);
    }

    /** The most a part may be set to: more than all parts together could not hold. */
    public long mostForOnePart() {
        return allParts();
    }

    private long units(int nineteenths) {
        return allParts() / UNITS * nineteenths;
    }
}

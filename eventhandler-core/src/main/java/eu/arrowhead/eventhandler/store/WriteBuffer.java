package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The events accepted and not yet committed, in id order, bounded both in events ({@code store.buffer-events},
 * which bounds what a crash can lose) and in the heap they hold ({@code store.buffer-bytes}). Events stay here
 * until their commit, so a replay that reads this buffer and then the database sees each event once.
 *
 * <p>Not thread-safe: the store's lock guards it.
 */
final class WriteBuffer {
    /**
     * What an event holds on the heap besides its JSON: the record, the list slot, the strings and the
     * metadata map parsed from the JSON (which at most repeat its content), and their headers. An estimate
     * on the safe side, so that the bound holds in bytes the heap really has.
     */
    private static final int EVENT_OVERHEAD_BYTES = 256;
    private static final int METADATA_ENTRY_BYTES = 128;

    /**
     * Events appended together: one publish request.
     *
     * @param key          its {@code Idempotency-Key}, written in the same transaction; {@link PublishKey#NONE} if it
     *                     had none
     * @param keyedAtMillis when a keyed publish was accepted (wall clock), 0 for one without a key: a stored key's
     *                     window counts from here, as it does in memory, not from a commit that an outage delayed
     */
    record Entry(long firstId, List<IncomingEvent> events, PublishKey key, long keyedAtMillis, long bytes,
                 Runnable afterCommit, CompletableFuture<Void> committed) {
        long lastId() {
            return firstId + events.size() - 1;
        }
    }

    /**
     * A batch takes at most this part of the buffer's bytes. While H2 writes a batch it holds several copies of it
     * that the buffer does not count: the rows' strings, each large value converted to its bytes and put in blocks,
     * the blocks' unsaved pages, and the chunk written to the file, whose buffer H2 keeps for the next chunk if it
     * is under 4 MiB. With a whole full buffer as one batch (60 KB events at {@code -Xmx64m}) those copies came to
     * some 10 MiB beyond every share; one eighth keeps them within about half the buffer's own share.
     */
    private static final int BATCH_PARTS = 8;

    private final int maxEvents;
    private final long maxBytes;
    /** Appended, not yet taken by the writer. */
    private final ArrayDeque<Entry> pending = new ArrayDeque<>();
    /** Taken by the writer, not yet committed. */
    private List<Entry> inFlight = List.of();
    private int events;
    private long bytes;

    WriteBuffer(int maxEvents, long maxBytes) {
        this.maxEvents = maxEvents;
        this.maxBytes = maxBytes;
    }

    /** The heap the events hold while they wait here. */
    static long bytesOf(List<IncomingEvent> events) {
        long total = 0;
        for (IncomingEvent event : events) {
            total += EVENT_OVERHEAD_BYTES + 2L * event.json().length + (long) METADATA_ENTRY_BYTES * event.metaData().size();
        }
        return total;
    }

    /**
     * A publish of more than this part of either bound is large: it may fill the buffer only up to the
     * {@link #RESERVED_PART reserve}.
     */
    private static final int LARGE_PART = 256;
    /**
     * This part of each bound is kept for small publishes. One client sending large events as fast as the buffer
     * takes them keeps it full, and every other publish would find it full too: in {@code EveryLimitAtOnceIT} a
     * bystander's small events were refused up to 35 times in 600 while the writer was slowed by the collector.
     * An eighth of the buffer holds hundreds of small events (1.15 MiB at {@code -Xmx64m}: some 350 of 400 bytes),
     * many seconds of a sensor's publishes behind a stalled writer.
     */
    private static final int RESERVED_PART = 8;

    /**
     * Whether events of this size may join: a large publish only below the reserve, a small one up to the bounds.
     * An empty buffer takes any one publish, so none is refused forever.
     */
    boolean fits(int count, long size) {
        if (events == 0) {
            return true;
        }
        boolean large = large(count, maxEvents) || large(size, maxBytes);
        int eventRoom = large ? maxEvents - maxEvents / RESERVED_PART : maxEvents;
        long byteRoom = large ? maxBytes - maxBytes / RESERVED_PART : maxBytes;
        return events + count <= eventRoom && bytes + size <= byteRoom;
    }

    /** A bound too small to tell a small publish from a large one (under {@value #LARGE_PART}) takes all alike. */
    private static boolean large(long amount, long bound) {
        return bound >= LARGE_PART && amount > bound / LARGE_PART;
    }

    /**
     * Whether a publish whose body has this many bytes may join, judged before it is parsed: as one event whose
     * JSON is the whole body.
     */
    boolean fitsBody(long bodyBytes) {
        return fits(1, EVENT_OVERHEAD_BYTES + 2 * bodyBytes);
    }

    void add(Entry entry) {
        pending.addLast(entry);
        events += entry.events().size();
        bytes += entry.bytes();
    }

    /** Removes the oldest entry the writer has not taken, or returns {@code null} if there is none. */
    Entry dropOldest() {
        Entry oldest = pending.pollFirst();
        if (oldest != null) {
            events -= oldest.events().size();
            bytes -= oldest.bytes();
        }
        return oldest;
    }

    boolean hasPending() {
        return !pending.isEmpty();
    }

    /**
     * Hands the oldest entries, up to {@code maxBatch} events and {@link #BATCH_PARTS 1/8} of the buffer's bytes (at
     * least one entry), to the writer.
     */
    List<Entry> take(int maxBatch) {
        List<Entry> batch = new ArrayList<>();
        int count = 0;
        long size = 0;
        long maxSize = maxBytes / BATCH_PARTS;
        Entry next;
        while ((next = pending.peekFirst()) != null
                && (batch.isEmpty() || count + next.events().size() <= maxBatch && size + next.bytes() <= maxSize)) {
            batch.add(pending.pollFirst());
            count += next.events().size();
            size += next.bytes();
        }
        inFlight = batch;
        return batch;
    }

    /** The writer's batch is committed: its events leave the buffer. */
    void committed() {
        for (Entry entry : inFlight) {
            events -= entry.events().size();
            bytes -= entry.bytes();
        }
        inFlight = List.of();
    }

    /** The writer's batch failed: it goes back to the head, to be written first. */
    void requeue() {
        for (int i = inFlight.size() - 1; i >= 0; i--) {
            pending.addFirst(inFlight.get(i));
        }
        inFlight = List.of();
    }

    /** Empties the buffer and returns everything it held, in id order. */
    List<Entry> clear() {
        List<Entry> all = new ArrayList<>(inFlight);
        all.addAll(pending);
        pending.clear();
        inFlight = List.of();
        events = 0;
        bytes = 0;
        return all;
    }

    int events() {
        return events;
    }

    long bytes() {
        return bytes;
    }

    /** Adds the buffered events of the topics with ids in ({@code afterId}, {@code upToId}], in id order. */
    void collect(long afterId, long upToId, Set<String> topicKeys, List<PublishedEvent> into) {
        collect(inFlight, afterId, upToId, topicKeys, into);
        collect(pending, afterId, upToId, topicKeys, into);
    }

    private static void collect(Iterable<Entry> entries, long afterId, long upToId, Set<String> topicKeys,
                                List<PublishedEvent> into) {
        for (Entry entry : entries) {
            if (entry.lastId() <= afterId || entry.firstId() > upToId) {
                continue;
            }
            long id = entry.firstId();
            for (IncomingEvent event : entry.events()) {
                if (id > afterId && id <= upToId && topicKeys.contains(event.topicKey())) {
                    into.add(PublishedEvent.logged(id, event));
                }
                id++;
            }
        }
    }
}

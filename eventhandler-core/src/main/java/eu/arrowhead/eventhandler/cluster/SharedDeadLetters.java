package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.api.RedeliveryResponse;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.DeadLetters;
import eu.arrowhead.eventhandler.push.FailedPost;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.SubscriptionCounters;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode's dead-letter lists: the events push subscribers refused for good, kept where every node sees them
 * ({@link DeadLetterBucket}), so that any node lists, redelivers and drops them. A {@link PushCursor} whose
 * subscriber refused its event too often {@linkplain #setAside sets it aside} here: the letter is written, then the
 * event acknowledged, and the cursor goes on. Writes and redeliveries run on this node's one letters thread, off
 * the NATS and HTTP threads. The counts are this node's: a cluster's are the sum over its nodes.
 *
 * <p>A subscription is never paused in cluster mode ({@code push.pause-after-dead-letters} is refused at the
 * start): {@link #resume} finds nothing to resume.
 */
final class SharedDeadLetters implements DeadLetterLists, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SharedDeadLetters.class);

    private final DeadLetterBucket bucket;
    private final StreamReader reader;
    private final PushSender sender;
    private final PushConfig config;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(NamedThreads.daemons("eh-dead-letters"));
    /** This node's cursors, by subscription id: the subscriptions it can redeliver to. */
    private final Map<Long, PushCursor> cursors = new ConcurrentHashMap<>();
    private final Map<Long, LetterRedelivery> redeliveries = new ConcurrentHashMap<>();
    private final SubscriptionCounters setAside = new SubscriptionCounters();
    private final SubscriptionCounters dropped = new SubscriptionCounters();

    SharedDeadLetters(DeadLetterBucket bucket, StreamReader reader, PushSender sender, PushConfig config) {
        this.bucket = bucket;
        this.reader = reader;
        this.sender = sender;
        this.config = config;
    }

    /** The letter of an event and the subscriber's last answer to it, now. */
    static DeadLetter letter(long subscriptionId, long eventId, String eventType, FailedPost why) {
        return new DeadLetter(subscriptionId, eventId, eventType, why.status(), why.excerpt(),
                System.currentTimeMillis());
    }

    /** A cursor of this node: its subscription's letters may be redelivered from here. */
    void register(long subscriptionId, PushCursor cursor) {
        cursors.put(subscriptionId, cursor);
    }

    /**
     * A cursor's subscriber refused an event for good too often: its letter is written (the list cut to
     * {@code push.dead-letter-max}), then {@code taken} acknowledges the event. If the letter cannot be written,
     * {@code notTaken} hands the event back to the stream, to be tried and set aside again. A letter that is
     * listed already (the node that wrote it died before its acknowledgement) is not counted or said again.
     */
    void setAside(PushCursor cursor, long eventId, String eventType, FailedPost why, long tries, Runnable taken,
                  Runnable notTaken) {
        long subscriptionId = cursor.subscriptionId();
        try {
            thread.execute(() -> {
                try {
                    if (bucket.create(letter(subscriptionId, eventId, eventType, why))) {
                        setAside.add(subscriptionId, 1);
                        dropped.add(subscriptionId, bucket.trim(subscriptionId, config.deadLetterMax()));
                        LOG.warn("push subscription {} to {}: event {} ({}) was tried {} times, the last refused for"
                                + " good ({}); it is set aside on the subscription's dead-letter list"
                                + " (eventhandler_push_dead_letters_total) and the next event is sent", subscriptionId,
                                cursor.currentRules().target(), eventId, eventType, tries, why);
                    }
                } catch (RuntimeException e) {
                    LOG.debug("push subscription {}: event {} cannot be set aside now ({}); the stream sends it again",
                            subscriptionId, eventId, e.getMessage());
                    notTaken.run();
                    return;
                }
                taken.run();
            });
        } catch (RejectedExecutionException e) {
            notTaken.run(); // the node stops
        }
    }

    /**
     * The subscription is gone: its letters go too. Every node's cursor is closed, and each removes them (the
     * second finds none); a node that stops keeps them.
     */
    void forget(long subscriptionId, PushCursor cursor) {
        cursors.remove(subscriptionId, cursor);
        LetterRedelivery redelivery = redeliveries.remove(subscriptionId);
        if (redelivery != null) {
            redelivery.close();
        }
        setAside.remove(subscriptionId);
        dropped.remove(subscriptionId);
        try {
            thread.execute(() -> {
                try {
                    bucket.removeAll(subscriptionId);
                } catch (RuntimeException e) {
                    LOG.warn("the dead letters of deleted push subscription {} cannot be removed now: {}",
                            subscriptionId, e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            // The node stops; another node removes them.
        }
    }

    @Override
    public List<DeadLetter> list(long subscriptionId, long afterEventId, int limit) {
        return bucket.list(subscriptionId, afterEventId, limit);
    }

    @Override
    public long count(long subscriptionId) {
        return bucket.eventIds(subscriptionId).size();
    }

    @Override
    public int drop(long subscriptionId, OptionalLong eventId) {
        if (eventId.isEmpty()) {
            return bucket.removeAll(subscriptionId);
        }
        if (!bucket.remove(subscriptionId, eventId.getAsLong())) {
            throw DeadLetters.notListed(subscriptionId, eventId.getAsLong());
        }
        return 1;
    }

    /**
     * Queues the letters to be POSTed from this node ({@link LetterRedelivery}), beside the events the cursor sends.
     * Those before the stream's first id are reported as {@code notInLog} and stay listed until dropped.
     */
    @Override
    public Optional<RedeliveryResponse> redeliver(long subscriptionId, OptionalLong eventId) {
        PushCursor cursor = cursors.get(subscriptionId);
        if (cursor == null) {
            return Optional.empty();
        }
        List<Long> ids;
        if (eventId.isPresent()) {
            if (bucket.get(subscriptionId, eventId.getAsLong()) == null) {
                throw DeadLetters.notListed(subscriptionId, eventId.getAsLong());
            }
            ids = List.of(eventId.getAsLong());
        } else {
            ids = bucket.eventIds(subscriptionId);
        }
        long first = reader.firstSequence();
        LetterRedelivery redelivery = redeliveries.computeIfAbsent(subscriptionId,
                id -> new LetterRedelivery(id, cursor, bucket, reader, sender, thread));
        List<Long> queued = new ArrayList<>();
        List<Long> alreadyQueued = new ArrayList<>();
        List<Long> notInLog = new ArrayList<>();
        for (long id : ids) {
            (id < first ? notInLog : redelivery.add(id) ? queued : alreadyQueued).add(id);
        }
        return Optional.of(new RedeliveryResponse(queued, alreadyQueued, notInLog, 0));
    }

    @Override
    public Optional<Boolean> resume(long subscriptionId) {
        return cursors.containsKey(subscriptionId) ? Optional.of(false) : Optional.empty();
    }

    @Override
    public Map<Long, Long> setAsideCounts() {
        return setAside.sums();
    }

    @Override
    public Map<Long, Long> droppedCounts() {
        return dropped.sums();
    }

    @Override
    public int paused() {
        return 0;
    }

    /** The node stops: writes not yet made are left to the stream, which sends their events again. */
    @Override
    public void close() {
        thread.shutdownNow();
    }
}

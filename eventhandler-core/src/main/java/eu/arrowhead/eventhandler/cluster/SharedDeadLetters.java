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
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode's dead-letter lists: the events push subscribers refused for good, kept where every node sees them
 * ({@link DeadLetterBucket}), so that any node lists, redelivers and drops them. A {@link PushCursor} whose
 * subscriber refused its event too often {@linkplain #setAside sets it aside} here: the letter is written, then the
 * event acknowledged, and the cursor goes on. Writes and redeliveries run on this node's one letters thread, off
 * the NATS and HTTP threads. The counts are this node's: a cluster's are the sum over its nodes.
 *
 * <p>After {@code push.pause-after-dead-letters} letters in a row the subscription is paused on every node
 * ({@link SharedPauses}) until a sysop resumes it or redelivers its letters.
 */
final class SharedDeadLetters implements DeadLetterLists, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SharedDeadLetters.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(2);

    private final DeadLetterBucket bucket;
    private final SharedPauses pauses;
    private final StreamReader reader;
    private final PushSender sender;
    private final PushConfig config;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(NamedThreads.daemons("eh-dead-letters"));
    /** This node's cursors, by subscription id: the subscriptions it can redeliver to. */
    private final Map<Long, PushCursor> cursors = new ConcurrentHashMap<>();
    private final Map<Long, LetterRedelivery> redeliveries = new ConcurrentHashMap<>();
    private final SubscriptionCounters setAside = new SubscriptionCounters();
    private final SubscriptionCounters dropped = new SubscriptionCounters();

    SharedDeadLetters(KeyValue store, JetStreamManagement management, StreamReader reader, PushSender sender,
                      PushConfig config) {
        this.bucket = new DeadLetterBucket(store, management);
        this.pauses = new SharedPauses(store, management, cursors::get);
        this.reader = reader;
        this.sender = sender;
        this.config = config;
    }

    /** The letter of an event and the subscriber's last answer to it, now. */
    static DeadLetter letter(long subscriptionId, long eventId, String eventType, FailedPost why) {
        return new DeadLetter(subscriptionId, eventId, eventType, why.status(), why.excerpt(),
                System.currentTimeMillis());
    }

    /** Puts every node's pauses in effect here; before the subscriptions are loaded. */
    void watchPauses() throws IOException {
        pauses.watch();
    }

    /**
     * A cursor of this node, not yet following its topic: paused if its subscription is, and its letters may be
     * redelivered from here.
     */
    void register(long subscriptionId, PushCursor cursor) {
        cursor.paused(pauses.reason(subscriptionId));
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
                        LOG.warn("push subscription {} to {}: event {} ({}) was tried {} times, the last refused for"
                                + " good ({}); it is set aside on the subscription's dead-letter list"
                                + " (eventhandler_push_dead_letters_total) and the next event is sent", subscriptionId,
                                cursor.currentRules().target(), eventId, eventType, tries, why);
                        pauseIfInARow(cursor, eventId, why, kept(subscriptionId));
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

    /** Cuts a subscription's list to push.dead-letter-max, the lowest ids dropped (counted). @return those kept */
    private List<Long> kept(long subscriptionId) {
        List<Long> ids = bucket.eventIds(subscriptionId);
        int over = Math.max(0, ids.size() - config.deadLetterMax());
        dropped.add(subscriptionId, bucket.remove(subscriptionId, ids.subList(0, over)));
        return ids.subList(over, ids.size());
    }

    /**
     * Pauses the subscription if its last push.pause-after-dead-letters letters, since it was last resumed, are
     * events of its topic in a row: the stream holds no event of the topic between them, so none was taken between.
     */
    private void pauseIfInARow(PushCursor cursor, long eventId, FailedPost why, List<Long> letters) {
        int pauseAfter = config.pauseAfterDeadLetters();
        long subscriptionId = cursor.subscriptionId();
        String topic = cursor.topic();
        if (pauseAfter == 0 || topic == null || pauses.reason(subscriptionId) != null) {
            return;
        }
        long start = pauses.rowStart(subscriptionId);
        List<Long> row = letters.stream().filter(id -> id > start && id <= eventId).toList();
        if (row.size() < pauseAfter) {
            return;
        }
        row = row.subList(row.size() - pauseAfter, row.size());
        String reason = pauseAfter + " events in a row were refused for good and set aside (push"
                + ".pause-after-dead-letters), the last with " + why;
        try {
            for (int i = 1; i < row.size(); i++) {
                if (reader.nextOfTopic(row.get(i - 1), topic) != row.get(i)) {
                    return;
                }
            }
            pauses.pause(subscriptionId, reason);
        } catch (RuntimeException e) {
            LOG.warn("push subscription {} cannot be paused now ({}): {}", subscriptionId, e.getMessage(), reason);
            return;
        }
        LOG.warn("push subscription {} to {} is paused on every node: {}. Its events wait in the cluster's stream; a"
                + " sysop resumes it with POST /eventhandler/mgmt/subscriptions/{}/resume", subscriptionId,
                cursor.currentRules().target(), reason, subscriptionId);
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
                    pauses.forget(subscriptionId);
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
        resumeAfterLetters(subscriptionId);
        return Optional.of(new RedeliveryResponse(queued, alreadyQueued, notInLog, 0));
    }

    /** Resumes a paused subscription on every node; the letters it has count toward no later pause. */
    @Override
    public Optional<Boolean> resume(long subscriptionId) {
        if (!cursors.containsKey(subscriptionId)) {
            return Optional.empty();
        }
        return Optional.of(pauses.reason(subscriptionId) != null && resumeAfterLetters(subscriptionId));
    }

    /** @return whether it was paused */
    private boolean resumeAfterLetters(long subscriptionId) {
        List<Long> ids = bucket.eventIds(subscriptionId);
        return pauses.resume(subscriptionId, ids.isEmpty() ? 0 : ids.get(ids.size() - 1));
    }

    @Override
    public Map<Long, Long> setAsideCounts() {
        return setAside.sums();
    }

    @Override
    public Map<Long, Long> droppedCounts() {
        return dropped.sums();
    }

    /** The cluster's paused subscriptions, as this node sees them. */
    @Override
    public int paused() {
        return pauses.count();
    }

    /**
     * The node stops: the letters thread finishes what it was given, for up to the stop's wait; a write not made by
     * then is left to the stream, which sends its event again. No redelivery goes on.
     */
    @Override
    public void close() {
        redeliveries.values().forEach(LetterRedelivery::close);
        thread.shutdown();
        try {
            if (!thread.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}

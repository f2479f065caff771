package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.api.RedeliveryResponse;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.DeadLetters;
import eu.arrowhead.eventhandler.push.FailedPost;
import eu.arrowhead.eventhandler.push.PushRules;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.SubscriptionCounters;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
        this.pauses = new SharedPauses(store, management, cursors::get, thread);
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
    void watchPauses(Duration timeout) throws IOException {
        pauses.watch(timeout);
    }

    /**
     * Removes, on the letters' thread, the letters and pauses of subscriptions that are gone: a node that stopped
     * while one was deleted, or a write that raced a delete, may have left them.
     *
     * @param existing the ids of the subscriptions there are, read after the bucket's keys
     */
    void sweep(Supplier<Set<Long>> existing) {
        try {
            thread.execute(() -> {
                try {
                    Set<Long> letters = bucket.subscriptionIds();
                    Set<Long> paused = pauses.subscriptionIds();
                    Set<Long> there = existing.get();
                    letters.stream().filter(id -> !there.contains(id)).forEach(bucket::removeAll);
                    paused.stream().filter(id -> !there.contains(id)).forEach(pauses::forget);
                } catch (RuntimeException e) {
                    LOG.warn("the dead letters of deleted push subscriptions cannot be looked for now: {}",
                            e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            // The node stops.
        }
    }

    /**
     * A cursor of this node, not yet following its topic: paused if its subscription is, and its letters may be
     * redelivered from here.
     */
    void register(long subscriptionId, PushCursor cursor) {
        cursors.put(subscriptionId, cursor);
        cursor.paused(pauses.reason(subscriptionId));
        pauses.tell(subscriptionId); // after a change that came between the two lines above
    }

    /** Why a subscription is paused, as this node knows, or {@code null}. */
    String pauseReason(long subscriptionId) {
        return pauses.reason(subscriptionId);
    }

    /**
     * A cursor's subscriber refused an event for good too often: its letter is written (the list cut to
     * {@code push.dead-letter-max}), then {@code taken} acknowledges the event. If the letter cannot be written,
     * {@code notTaken} hands the event back to the stream, to be tried and set aside again. A letter that is
     * listed already (the node that wrote it died before its acknowledgement) is not counted or said again.
     */
    void setAside(PushCursor cursor, long eventId, String eventType, FailedPost why, long tries, Runnable taken,
                  Runnable notTaken) {
        try {
            thread.execute(() -> write(cursor, eventId, eventType, why, tries, taken, notTaken));
        } catch (RejectedExecutionException e) {
            notTaken.run(); // the node stops
        }
    }

    /** On the letters' thread. */
    private void write(PushCursor cursor, long eventId, String eventType, FailedPost why, long tries, Runnable taken,
                       Runnable notTaken) {
        long subscriptionId = cursor.subscriptionId();
        if (cursors.get(subscriptionId) != cursor) {
            // Deleted while its POST was under way: its letters went before this one could be written, and its
            // cursor with them. (forget's removal runs after this on this thread: what is written here goes too.)
            LOG.debug("push subscription {} was deleted while its event {} was being set aside: not listed",
                    subscriptionId, eventId);
            return;
        }
        boolean created;
        try {
            created = bucket.create(letter(subscriptionId, eventId, eventType, why));
        } catch (RuntimeException e) {
            LOG.debug("push subscription {}: event {} cannot be set aside now ({}); the stream sends it again",
                    subscriptionId, eventId, e.getMessage());
            notTaken.run();
            return;
        }
        if (created) {
            setAside.add(subscriptionId, 1);
            LOG.warn("push subscription {} to {}: event {} ({}) was tried {} times, the last refused for good ({}); it"
                    + " is set aside on the subscription's dead-letter list (eventhandler_push_dead_letters_total) and"
                    + " the next event is sent", subscriptionId, cursor.currentRules().target(), eventId, eventType,
                    tries, why);
            cutAndPause(cursor, eventId, why);
        }
        // Listed, so taken whatever came after: sent again by the stream, it would be sent twice by a redelivery.
        taken.run();
    }

    private void cutAndPause(PushCursor cursor, long eventId, FailedPost why) {
        try {
            pauseIfInARow(cursor, eventId, why, kept(cursor.subscriptionId()));
        } catch (RuntimeException e) {
            LOG.warn("push subscription {}: its dead-letter list cannot be cut to push.dead-letter-max or its pause"
                    + " decided now: {}", cursor.subscriptionId(), e.getMessage());
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
     * events of its topic in a row: the stream holds no event between them that the subscription's rules pass, so
     * none was taken between. The row is read from the list, so it is never longer than push.dead-letter-max (the
     * configuration refuses a longer one). Checked from the newest pair back: a row broken near its end costs one
     * read of the stream, and each event its rules filter out between two letters one more.
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
            for (int i = row.size() - 1; i > 0; i--) {
                if (sentBetween(row.get(i - 1), row.get(i), topic, cursor.currentRules())) {
                    return;
                }
            }
            pauses.pause(subscriptionId, reason);
            cursor.paused(pauses.reason(subscriptionId)); // before its event is taken: no next one is pulled here
        } catch (RuntimeException e) {
            LOG.warn("push subscription {} cannot be paused now ({}): {}", subscriptionId, e.getMessage(), reason);
            return;
        }
        LOG.warn("push subscription {} to {} is paused on every node: {}. Its events wait in the cluster's stream; a"
                + " sysop resumes it with POST /eventhandler/mgmt/subscriptions/{}/resume", subscriptionId,
                cursor.currentRules().target(), reason, subscriptionId);
    }

    /** Whether the stream holds an event of the topic between two ids that the rules pass (it was sent). */
    private boolean sentBetween(long afterId, long beforeId, String topic, PushRules rules) {
        for (long id = reader.nextOfTopic(afterId, topic); id != 0 && id < beforeId;
                id = reader.nextOfTopic(id, topic)) {
            IncomingEvent event = reader.event(id);
            if (event != null && rules.passes(PublishedEvent.logged(id, event))) {
                return true;
            }
        }
        return false;
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
        return Optional.of(resumeAfterLetters(subscriptionId));
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

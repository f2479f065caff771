package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.RedeliveryResponse;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Single-node mode's push subscriptions with an event store: each is a {@link LogCursor} in the log. This keeps
 * them all, reads the log for those catching up, and keeps their cursors in the database.
 *
 * <p>One thread ({@code eh-push-log}) reads every catching-up cursor's pages, one page at a time, so the pages in
 * memory being read are one at a time whatever the number of subscribers; a read the store refuses now is tried
 * again after the retry pause, and a cursor whose next event the heap budget has no room for waits in the budget's
 * line ({@link PushBudget#takeFirst}) and is read again once that room is free. The same thread saves the cursors
 * that moved, once a second, in one transaction: the POST path never waits for a commit. A new cursor is saved
 * before its subscription is answered. So a crash makes a subscriber get again at most what it acknowledged in
 * the last second (and a POST whose answer was not yet in), never fewer.
 *
 * <p>An event a subscriber refused for good is set aside on its subscription's list ({@link DeadLetters}) and saved at
 * once, in the transaction of the next save of the cursors, so that no cursor is kept past a letter that is not. A
 * sysop resumes a paused cursor ({@link #resume}) or sends its letters again ({@link #redeliver}).
 */
public final class LogCursors implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogCursors.class);
    /**
     * Events a catching-up cursor reads at once (less if {@code store.replay-page-events} is less): a page is read
     * only once the last one is sent, so a larger one buys nothing but heap.
     */
    private static final int PAGE_EVENTS = 1_000;
    private static final Duration SAVE_EVERY = Duration.ofSeconds(1);
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);
    /** Letters a redelivery reads from the list at once: their events are read and charged one by one. */
    private static final int REDELIVERY_PAGE = 100;

    private final Hub hub;
    private final EventLog log;
    private final EventStore store;
    private final PushSender sender;
    private final PushConfig config;
    private final int pageEvents;
    private final ScheduledThreadPoolExecutor thread;
    /** The cursors the database had at start, by subscription; each is taken by its subscription as it loads. */
    private final Map<Long, Long> kept;
    private final Map<Long, LogCursor> cursors = new ConcurrentHashMap<>();
    private final Map<Long, LongAdder> skipped = new ConcurrentHashMap<>();
    private final DeadLetters deadLetters;
    /** Only the saving thread uses it: whether the last save failed, said once per outage. */
    private boolean saveFailing;

    private LogCursors(Hub hub, EventLog log, EventStore store, PushSender sender, PushConfig config, int pageEvents,
                       Map<Long, Long> kept) {
        this.hub = hub;
        this.log = log;
        this.store = store;
        this.sender = sender;
        this.config = config;
        this.pageEvents = Math.min(PAGE_EVENTS, pageEvents);
        this.kept = new ConcurrentHashMap<>(kept);
        this.deadLetters = new DeadLetters(store, config.deadLetterMax());
        this.thread = new ScheduledThreadPoolExecutor(1, NamedThreads.daemons("eh-push-log"));
        thread.setRemoveOnCancelPolicy(true);
        thread.scheduleWithFixedDelay(this::saveMoved, SAVE_EVERY.toMillis(), SAVE_EVERY.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /**
     * Reads the cursors the store keeps and starts saving them.
     *
     * @param log        the event log the cursors read
     * @param store      where the cursors are kept
     * @param pageEvents {@code store.replay-page-events}: the most events one read of the log returns
     */
    public static LogCursors open(Hub hub, EventLog log, EventStore store, PushSender sender, PushConfig config,
                                  int pageEvents) {
        return new LogCursors(hub, log, store, sender, config, pageEvents, store.loadCursors());
    }

    /** The subscriptions, each delivered from its cursor. */
    public PushSubscriptions subscriptions(Authorizer authorizer) {
        return new PushSubscriptions(store, authorizer, sender, config, budget -> (id, rules) -> {
            Long resumeAfter = kept.remove(id);
            LogCursor cursor = new LogCursor(id, hub, this, sender, budget, rules,
                    resumeAfter == null ? -1 : resumeAfter);
            cursors.put(id, cursor);
            return cursor;
        });
    }

    EventLog log() {
        return log;
    }

    /** Reads the cursor's next page on this thread. */
    void read(LogCursor cursor) {
        readAfter(cursor, 0, Duration.ZERO);
    }

    private void readAfter(LogCursor cursor, int attempt, Duration pause) {
        try {
            thread.schedule(() -> readPage(cursor, attempt), pause.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Stopping: the cursor stays where it is in the database.
        }
    }

    private void readPage(LogCursor cursor, int attempt) {
        String why;
        try {
            if (cursor.readPage(pageEvents)) {
                return;
            }
            why = "the event log gave no event past its cursor yet";
        } catch (UnavailableException e) {
            why = e.getMessage();
        } catch (RuntimeException e) {
            LOG.error("reading the event log for push subscription {} failed; it is tried again",
                    cursor.subscriptionId(), e);
            why = e.toString();
        }
        LOG.debug("push subscription {} cannot read the event log now ({}); read again in {}",
                cursor.subscriptionId(), why, config.backoff(attempt));
        readAfter(cursor, attempt + 1, config.backoff(attempt));
    }

    /**
     * Saves a new cursor at once: the subscription is answered only once the database knows where it starts.
     *
     * @throws UnavailableException if the database cannot take it now
     */
    void saveNow(LogCursor cursor, long acknowledged) {
        try {
            store.saveCursors(Map.of(cursor.subscriptionId(), acknowledged));
        } catch (RuntimeException e) {
            LOG.warn("the event store cannot keep push subscription {}'s cursor: {}", cursor.subscriptionId(),
                    e.toString());
            throw new UnavailableException("the event store cannot be written now; try again");
        }
        cursor.saved(acknowledged);
    }

    /**
     * Saves the cursors that moved since the last save and the letters set aside, in one transaction. The cursors are
     * read first: a letter is added before its cursor moves past it, so every letter a saved cursor passed is saved.
     */
    private void saveMoved() {
        Map<LogCursor, Long> moved = new HashMap<>();
        for (LogCursor cursor : cursors.values()) {
            long acknowledged = cursor.unsaved();
            if (acknowledged >= 0) {
                moved.put(cursor, acknowledged);
            }
        }
        List<DeadLetter> letters = deadLetters.takePending();
        if (moved.isEmpty() && letters.isEmpty()) {
            deleteDropped();
            return;
        }
        Map<Long, Long> rows = new HashMap<>();
        moved.forEach((cursor, acknowledged) -> rows.put(cursor.subscriptionId(), acknowledged));
        Map<Long, Integer> dropped;
        try {
            dropped = store.saveCursors(rows, letters, deadLetters.keep());
        } catch (RuntimeException e) {
            deadLetters.putBack(letters);
            if (!saveFailing) {
                saveFailing = true;
                LOG.warn("the push subscriptions' cursors cannot be saved now ({}); tried again every second. Until"
                        + " then a crash would make their subscribers get again what they acknowledged since",
                        e.toString());
            }
            return;
        }
        if (saveFailing) {
            saveFailing = false;
            LOG.info("the push subscriptions' cursors are saved again");
        }
        moved.forEach(LogCursor::saved);
        deadLetters.droppedByBound(dropped);
        deleteDropped();
    }

    /** Deletes the letters a sysop dropped while their save was under way; those it cannot, after the next save. */
    private void deleteDropped() {
        try {
            deadLetters.saved();
        } catch (RuntimeException e) {
            LOG.debug("dead letters dropped while they were being saved cannot be deleted now ({}); tried again in a"
                    + " second", e.toString());
        }
    }

    /**
     * The cursor's subscriber refused an event for good too often: it goes on the subscription's dead-letter list,
     * saved at once. Said once per event, and once more if the subscription pauses.
     *
     * @param pauses why the subscription pauses now, or {@code null}
     */
    void setAside(LogCursor cursor, PushBody body, FailedPost why, String pauses) {
        String eventType = eventType(body);
        deadLetters.add(new DeadLetter(cursor.subscriptionId(), body.id(), eventType, why.status(), why.excerpt(),
                System.currentTimeMillis()));
        LOG.warn("push subscription {} to {}: event {} ({}) was refused {} times ({}); it is set aside on the"
                        + " subscription's dead-letter list (eventhandler_push_dead_letters_total) and the next event"
                        + " is sent", cursor.subscriptionId(), cursor.target(), body.id(), eventType,
                config.poisonRetries() + 1, why);
        if (pauses != null) {
            LOG.warn("push subscription {} to {} is paused: {}. Its events wait in the event log; a sysop resumes it"
                    + " with POST /eventhandler/mgmt/subscriptions/{}/resume", cursor.subscriptionId(),
                    cursor.target(), pauses, cursor.subscriptionId());
        }
        try {
            thread.execute(this::saveMoved);
        } catch (RejectedExecutionException e) {
            // Stopping: the last save has it.
        }
    }

    /** The event type in the 4.x JSON of a pushed event: read once per letter, so that no event carries it. */
    private static String eventType(PushBody body) {
        try {
            return JsonMapper.get().readTree(body.json()).path("eventType").asText("");
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** A dead letter sent again was taken: it leaves the list. */
    void redelivered(LogCursor cursor, long eventId) {
        try {
            thread.execute(() -> {
                try {
                    deadLetters.drop(cursor.subscriptionId(), OptionalLong.of(eventId));
                } catch (RequestException e) {
                    // A sysop dropped it meanwhile.
                } catch (RuntimeException e) {
                    LOG.warn("push subscription {}: event {} was redelivered, but the store cannot take it off the"
                            + " dead-letter list now ({}); a sysop can delete it", cursor.subscriptionId(), eventId,
                            e.toString());
                }
            });
        } catch (RejectedExecutionException e) {
            // Stopping: it stays on the list.
        }
    }

    /** {@code push.pause-after-dead-letters}. */
    int pauseAfterDeadLetters() {
        return config.pauseAfterDeadLetters();
    }

    /** The subscriptions' dead-letter lists. */
    public DeadLetters deadLetters() {
        return deadLetters;
    }

    /**
     * Sends a subscription's dead letters again, read from the log, before its next event, and resumes it if it was
     * paused. Each stays on the list until its subscriber takes it. Each event is charged to push.total-max-bytes as
     * it is read: the first the budget has no room for ends the redelivery, and it and those after it are counted
     * as left for a later one. On a worker thread: it reads the log.
     *
     * @param eventId the one to send, or all
     * @return empty if there is no such subscription
     * @throws eu.arrowhead.eventhandler.protocol.RequestException 404 if {@code eventId} is not on the list
     * @throws UnavailableException if the log cannot be read now, or push.total-max-bytes has no room for a single
     *                              one of them
     */
    public Optional<RedeliveryResponse> redeliver(long subscriptionId, OptionalLong eventId) {
        LogCursor cursor = cursors.get(subscriptionId);
        if (cursor == null) {
            return Optional.empty();
        }
        List<Long> queued = new ArrayList<>();
        List<Long> alreadyQueued = new ArrayList<>();
        List<Long> notInLog = new ArrayList<>();
        DeadLetter refused = null;
        List<DeadLetter> page = letters(subscriptionId, eventId, 0);
        if (eventId.isPresent() && page.isEmpty()) {
            throw DeadLetters.notListed(subscriptionId, eventId.getAsLong());
        }
        // A page at a time: the list may be long, and a letter's event is charged as soon as it is read.
        while (!page.isEmpty() && refused == null) {
            for (DeadLetter letter : page) {
                PublishedEvent event = logged(letter);
                LogCursor.Redelivery done = event == null ? null : cursor.redeliver(new PushBody(event));
                if (done == LogCursor.Redelivery.GONE) {
                    return Optional.empty();
                }
                if (done == LogCursor.Redelivery.NO_ROOM) {
                    refused = letter;
                    break;
                }
                (done == null ? notInLog : done == LogCursor.Redelivery.QUEUED ? queued : alreadyQueued)
                        .add(letter.eventId());
            }
            page = eventId.isPresent() || refused != null ? List.of()
                    : letters(subscriptionId, eventId, page.get(page.size() - 1).eventId());
        }
        if (refused == null) {
            // Nothing left (the log may hold none of them, or all are queued already): resumed all the same.
            cursor.resume();
            return Optional.of(new RedeliveryResponse(queued, alreadyQueued, notInLog, 0));
        }
        if (queued.isEmpty() && alreadyQueued.isEmpty()) {
            throw new UnavailableException("push.total-max-bytes has no room now for event " + refused.eventId()
                    + " beside what the subscription holds; try again later");
        }
        long left = eventId.isPresent() ? 1 : Math.max(1, deadLetters.count(subscriptionId) - queued.size()
                - alreadyQueued.size() - notInLog.size());
        return Optional.of(new RedeliveryResponse(queued, alreadyQueued, notInLog, left));
    }

    /** The next page of a subscription's letters to redeliver: the one of {@code eventId}, or those after one. */
    private List<DeadLetter> letters(long subscriptionId, OptionalLong eventId, long after) {
        return eventId.isPresent()
                ? deadLetters.list(subscriptionId, eventId.getAsLong() - 1, 1).stream()
                        .filter(letter -> letter.eventId() == eventId.getAsLong()).toList()
                : deadLetters.list(subscriptionId, after, REDELIVERY_PAGE);
    }

    /** A dead letter's event as the log holds it, or {@code null} if it holds it no longer. */
    private PublishedEvent logged(DeadLetter letter) {
        long id = letter.eventId();
        log.requireReadable(id - 1, id);
        return log.read(id - 1, id, Set.of(letter.eventType().toLowerCase(Locale.ROOT)), SubscriberFilter.NONE, 1)
                .events().stream().filter(event -> event.id() == id).findFirst().orElse(null);
    }

    /**
     * Resumes a paused subscription, from the event after the last one it took or set aside.
     *
     * @return empty if there is no such subscription, else whether it was paused
     */
    public Optional<Boolean> resume(long subscriptionId) {
        LogCursor cursor = cursors.get(subscriptionId);
        return cursor == null ? Optional.empty() : Optional.of(cursor.resume());
    }

    /** How many subscriptions are paused now. */
    public int paused() {
        return (int) cursors.values().stream().filter(cursor -> cursor.pausedBecause() != null).count();
    }

    /**
     * The cursor passed ids the log no longer held: at most that many of the subscription's events were never
     * POSTed. Counted, and said once for each such hole.
     */
    void lost(LogCursor cursor, ReplayGap gap) {
        long ids = gap.resumedAfterId() - gap.requestedAfterId();
        skipped.computeIfAbsent(cursor.subscriptionId(), id -> new LongAdder()).add(ids);
        LOG.warn("push subscription {} to {}: the event log no longer held ids {}-{} when its cursor got there"
                        + " (retention deleted them, or they were lost), so up to {} of its events were never POSTed"
                        + " (eventhandler_push_cursor_skipped_ids_total)", cursor.subscriptionId(), cursor.target(),
                gap.requestedAfterId() + 1, gap.resumedAfterId(), ids);
    }

    /** The subscription is gone. (The store deletes its cursor with it.) */
    void forget(LogCursor cursor) {
        cursors.remove(cursor.subscriptionId(), cursor);
        skipped.remove(cursor.subscriptionId());
        deadLetters.forget(cursor.subscriptionId());
    }

    /** Ids of the log's holes each subscription's cursor passed, by subscription id. */
    public Map<Long, Long> skippedIds() {
        Map<Long, Long> counts = new HashMap<>();
        skipped.forEach((id, count) -> counts.put(id, count.sum()));
        return counts;
    }

    /**
     * The server stops: no cursor starts another POST or read. The POSTs under way end on their own
     * ({@link PushSender#awaitIdle}); whatever was not acknowledged is sent after the next start.
     */
    public void stop() {
        cursors.values().forEach(LogCursor::stop);
    }

    /**
     * Saves every cursor as it is now and stops this thread; before the store closes. A read under way is waited
     * for (never interrupted: it may be inside the database) up to 5 s. A stop that was interrupted before (the
     * interrupt is kept for the parts stopped after) still waits and saves: the interrupt is set again after.
     */
    @Override
    public void close() {
        stop();
        thread.shutdown();
        thread.getQueue().clear();
        // Else the wait ends at once and the save fails at once (the store's wait for a connection refuses an
        // interrupted thread): up to a second of acknowledged events would be sent again after the restart.
        boolean interrupted = Thread.interrupted();
        try {
            if (!thread.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("a read of the event log for a push subscription did not end within {} s", STOP_WAIT.toSeconds());
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        try {
            saveMoved();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

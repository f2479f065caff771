package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Replay;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Single-node mode's delivery of one push subscription with an event store: a cursor in the event log, the last id
 * its subscriber acknowledged, kept in the database ({@link LogCursors} saves it). The cursor's behaviour is cluster
 * mode's {@code PushCursor}'s: one POST in flight, in id order, a failed POST tried again with a pause that doubles
 * from {@code push.retry-initial-millis} to {@code push.retry-max-millis} for as long as it takes. So a subscriber
 * that is down misses nothing the log still holds, and its backlog is the log, not memory.
 *
 * <p>Two ways in. While the subscriber keeps up, the cursor is a subscriber of the hub and takes its events from
 * memory, under the hub's lock, into a small buffer ({@link PushBudget}'s rule): the live path reads no database.
 * Once an event does not fit (the subscriber is slow or down), or a POST fails, the cursor is <em>behind</em>: it
 * lets the hub's events go (the log has them) and, once its buffer is sent, reads the log a page at a time on
 * {@link LogCursors}' reader thread, until a page reaches the last event the hub offered; then it takes events from
 * memory again. A subscriber that is failing holds only the event being tried. A cursor holding nothing that is
 * refused an event reads the log at once (no POST's end would); a page's first event may take room past its share,
 * and when even that is refused the cursor waits in the budget's line, and reads again once it has room.
 *
 * <p>What the log no longer holds when the cursor gets there (retention deleted it, or it was lost) is counted
 * for the subscription and logged once per hole. A subscription moved to another event type goes on from that
 * type's newest event, like cluster mode's new cursor, once the store has the move ({@link #move}).
 *
 * <p>An event the subscriber refuses for good is set aside ({@link #setAside}, on the subscription's dead-letter
 * list that {@link LogCursors} keeps) and the cursor goes on; after {@code push.pause-after-dead-letters} in a row it
 * pauses, its events left in the log, until a sysop resumes it ({@link #resume}) or redelivers its dead letters
 * ({@link #redeliver}: sent before the cursor's next event, one at a time like the rest).
 *
 * <p>Lock order: the hub's lock, then this, then the budget's line; never the other way round. A publisher holding
 * the hub's lock may wait for this monitor, so nothing slow runs under it: a page is read, and charged to the
 * budget, before it is handed over.
 */
final class LogCursor extends HubDelivery {
    private final long subscriptionId;
    private final Hub hub;
    private final LogCursors cursors;
    private final Runnable startSending;
    private final Runnable readTheLog;
    /** Where it goes on from after a restart; -1 for a new subscription. Guarded by this, as are the fields below. */
    private long resumeAfter;
    private final Set<String> topics = new HashSet<>(2);
    /** The buffer of events from memory or from a page, and the one in flight. */
    private final HeldEvents held;
    /** Dead letters a sysop sends again, before the buffer; and the one in flight. */
    private final HeldEvents redeliveries;
    /** The last id the subscriber acknowledged, or that needed no POST: the cursor. */
    private long acknowledged;
    /** The cursor's value the database has; -1 until a new cursor's first save has ended. */
    private long saved;
    /** Every event up to this id that the subscription gets is acknowledged, in flight or in the buffer. */
    private long heldUpTo;
    /** The last id the hub offered. Those after {@link #heldUpTo} are read from the log. */
    private long offeredUpTo;
    /** The log holds events for the subscriber after {@link #heldUpTo} that memory does not. */
    private boolean behind = true;
    private boolean following;
    private boolean sending;
    private boolean reading;
    /** A move to another topic waits for the store: every offer is left to the log, and no page is read. */
    private boolean moving;
    /** Moves to another topic: a page read before one is not used. */
    private int moves;
    private int failedInARow;
    /** Events set aside since the subscriber last took one. */
    private int setAsideInARow;
    /** Why it is paused, or {@code null}. */
    private String pausedBecause;
    private boolean closed;
    private boolean stopping;

    /** @param resumeAfter the cursor as the database kept it, or -1 for a subscription that has none yet */
    LogCursor(long subscriptionId, Hub hub, LogCursors cursors, PushSender sender, PushBudget budget,
              PushRules rules, long resumeAfter) {
        super(sender, rules);
        this.subscriptionId = subscriptionId;
        this.hub = hub;
        this.cursors = cursors;
        this.readTheLog = () -> cursors.read(this);
        this.held = new HeldEvents(budget, readTheLog);
        this.redeliveries = new HeldEvents(budget);
        this.resumeAfter = resumeAfter;
        this.saved = resumeAfter;
        this.startSending = () -> sender.start(this);
    }

    long subscriptionId() {
        return subscriptionId;
    }

    /**
     * Receives the topic's events from now on. The first topic: from the kept cursor, or, for a new subscription,
     * from the newest event (saved at once, so that a crash right after it loses nothing); the events in between
     * come from the log. Another topic (the subscription moved): from that topic's newest event.
     *
     * @throws eu.arrowhead.eventhandler.protocol.UnavailableException if a new cursor cannot be saved
     */
    @Override
    public void follow(String topicKey) {
        // Outside this monitor: the hub's lock comes first. Offers that arrive before the cursor knows where it
        // is are left to the log (it starts behind).
        Replay live = hub.subscribe(Set.of(topicKey), this, OptionalLong.empty());
        long newest = live.liveAfterId();
        long start;
        boolean save;
        synchronized (this) {
            topics.add(topicKey);
            save = resumeAfter < 0;
            start = following || save ? newest : Math.min(resumeAfter, newest);
            if (following) {
                moves++;
                releaseBuffer();
            }
            following = true;
            startAt(start, newest);
        }
        if (save) {
            try {
                cursors.saveNow(this, start);
            } catch (RuntimeException e) {
                hub.unsubscribe(Set.of(topicKey), this);
                cursors.forget(this);
                throw e;
            }
        }
        catchUpIfIdle();
    }

    /**
     * Moves only once the store has the move: one it refuses leaves the cursor where it was, its backlog with it.
     * Until then the cursor takes nothing from either topic (the log has both): no event of the new topic is
     * taken for the old one's, nor read from where the old one was.
     */
    @Override
    public void move(String fromTopic, String toTopic, Runnable save) {
        synchronized (this) {
            moving = true;
            behind = true;
        }
        long newest;
        try {
            newest = hub.subscribe(Set.of(toTopic), this, OptionalLong.empty()).liveAfterId();
            try {
                save.run();
            } catch (RuntimeException e) {
                hub.unsubscribe(Set.of(toTopic), this);
                throw e;
            }
        } catch (RuntimeException e) {
            synchronized (this) {
                moving = false;
            }
            catchUpIfIdle();
            throw e;
        }
        hub.unsubscribe(Set.of(fromTopic), this);
        synchronized (this) {
            moving = false;
            topics.remove(fromTopic);
            topics.add(toTopic);
            moves++;
            releaseBuffer();
            startAt(newest, newest);
        }
        catchUpIfIdle();
    }

    /** Goes on after {@code start}; {@code newest} is the hub's newest event. Under this. */
    private void startAt(long start, long newest) {
        resumeAfter = start;
        acknowledged = Math.max(acknowledged, start);
        heldUpTo = Math.max(heldUpTo, start);
        offeredUpTo = Math.max(offeredUpTo, newest);
        behind = offeredUpTo > heldUpTo;
    }

    @Override
    public void unfollow(String topicKey) {
        hub.unsubscribe(Set.of(topicKey), this);
        synchronized (this) {
            topics.remove(topicKey);
        }
    }

    @Override
    void offer(PushBody body, Publication publication) {
        Runnable wake;
        synchronized (this) {
            if (closed) {
                return;
            }
            offeredUpTo = body.id();
            if (behind || failedInARow > 0 || pausedBecause != null || !held.tryAdd(body, redeliveries.bytes())) {
                // The log has it: read once the subscriber takes events again.
                behind = true;
                if (sending || reading || stopping || moving || !following || pausedBecause != null) {
                    // The end of that POST or read, the move, or the follow reads the log next.
                    return;
                }
                // Holding nothing, no POST's end would ever read it: read now.
                reading = true;
                wake = readTheLog;
            } else {
                heldUpTo = body.id();
                if (sending || reading) {
                    return;
                }
                sending = true;
                wake = startSending;
            }
        }
        // Waking a sender or the log's reader takes an executor's lock: not while every other publisher waits
        // for the hub.
        publication.afterHubLock(wake);
    }

    @Override
    public synchronized PushBody next() {
        PushBody done = held.inFlight();
        if (done != null && !stopping) {
            // Delivered, set aside, or it needs no POST (its publisher is no longer allowed, or it cannot be encoded).
            acknowledged = Math.max(acknowledged, done.id());
        }
        redeliveries.sent();
        if (closed || stopping) {
            held.sent();
            redeliveries.dropWaiting();
            sending = false;
            return null;
        }
        if (pausedBecause != null) {
            // What it holds is read from the log again once resumed.
            held.sent();
            redeliveries.dropWaiting();
            releaseBuffer();
            behind = true;
            sending = false;
            return null;
        }
        if (redeliveries.waiting() > 0) {
            held.sent();
            return redeliveries.next();
        }
        PushBody next = held.next();
        if (next != null) {
            return next;
        }
        sending = false;
        if (!behind) {
            acknowledged = Math.max(acknowledged, heldUpTo);
        } else if (!reading) {
            reading = true;
            cursors.read(this);
        }
        return null;
    }

    /**
     * The subscriber refused {@code body} for good, {@code push.poison-retries} more times: it goes on the dead-letter
     * list, before {@link #next} moves the cursor past it (so that the save that has the cursor has the letter), and
     * once {@code push.pause-after-dead-letters} were set aside in a row, the subscription pauses.
     */
    @Override
    public void setAside(PushBody body, FailedPost why) {
        String pauses = null;
        synchronized (this) {
            if (closed || stopping) {
                return;
            }
            // Its refusals were this event's: the next one is taken from memory again, and a failure of it is
            // the start of another outage (said, and the buffer let go).
            failedInARow = 0;
            setAsideInARow++;
            int pauseAfter = cursors.pauseAfterDeadLetters();
            if (pausedBecause == null && pauseAfter > 0 && setAsideInARow >= pauseAfter) {
                pausedBecause = setAsideInARow + " events in a row were refused for good and set aside (push"
                        + ".pause-after-dead-letters), the last with " + why;
                pauses = pausedBecause;
            }
        }
        cursors.setAside(this, body, why, pauses);
    }

    /**
     * Sends a dead letter again, before the next event, and resumes a paused subscription. An event already queued
     * or in flight is not queued twice. It is charged with what the cursor holds against the cursor's share of
     * push.total-max-bytes; one that the cursor would hold alone may take room past that share, up to the queues'
     * half, as a page's first event does. Started at once, even while the cursor reads (or waits in the budget's
     * line to): the read's end goes on from there.
     */
    Redelivery redeliver(PushBody body) {
        synchronized (this) {
            if (closed || stopping) {
                return Redelivery.GONE;
            }
            if (redeliveries.holds(body.id()) || held.holds(body.id())) {
                return Redelivery.ALREADY_QUEUED;
            }
            boolean alone = held.isEmpty() && redeliveries.isEmpty();
            if (!(alone ? redeliveries.tryAddAlone(body) : redeliveries.tryAdd(body, held.bytes()))) {
                return Redelivery.NO_ROOM;
            }
            pausedBecause = null;
            setAsideInARow = 0;
            if (sending) {
                return Redelivery.QUEUED;
            }
            sending = true;
        }
        sender.start(this);
        return Redelivery.QUEUED;
    }

    /** What became of a dead letter given to {@link #redeliver}. */
    enum Redelivery {
        QUEUED,
        /** It is queued or in flight from an earlier redelivery: sent once. */
        ALREADY_QUEUED,
        /** push.total-max-bytes has no room for it now beside what the cursor holds. */
        NO_ROOM,
        /** The subscription is going, or the server stopping. */
        GONE
    }

    /**
     * Goes on after a pause, from the event after the last one it took or set aside.
     *
     * @return whether it was paused
     */
    boolean resume() {
        synchronized (this) {
            if (pausedBecause == null) {
                return false;
            }
            pausedBecause = null;
            setAsideInARow = 0;
        }
        catchUpIfIdle();
        return true;
    }

    @Override
    public synchronized String pausedBecause() {
        return pausedBecause;
    }

    /** A page read is due and none is under way: the buffer is empty and nothing is being sent. */
    private void catchUpIfIdle() {
        synchronized (this) {
            if (!behind || sending || reading || closed || stopping || moving || pausedBecause != null) {
                return;
            }
            reading = true;
        }
        cursors.read(this);
    }

    /**
     * Reads the next page of what the subscriber has not got from the log and starts sending it; on the reader
     * thread, and only while the buffer is empty and nothing is in flight. The page is read and charged to the
     * budget outside this monitor, and handed over under it in one short step.
     *
     * @return whether it read, or waits in the budget's line to be woken (false: the log gave nothing past the
     *         cursor yet; {@link LogCursors} tries again later)
     */
    boolean readPage(int maxEvents) {
        long after;
        long upTo;
        int movesBefore;
        Set<String> from;
        PushRules current = rules();
        synchronized (this) {
            if (!reading) {
                // A wake from the budget's line that the cursor no longer waited for.
                return true;
            }
            if (closed || stopping || moving || topics.isEmpty() || pausedBecause != null) {
                // Unfollowed all (being removed): nothing to read until it follows a topic again. Moving: the
                // move's end reads.
                reading = false;
                held.leaveLine();
                return true;
            }
            after = heldUpTo;
            upTo = offeredUpTo;
            movesBefore = moves;
            from = Set.copyOf(topics);
        }
        // At once, rather than after the store's timeout, while the store's writer finds the database down.
        cursors.log().requireReadable(after, upTo);
        LogPage page = cursors.log().read(after, upTo, from, current.filter(), maxEvents);
        List<PushBody> bodies = new ArrayList<>(page.events().size());
        for (PublishedEvent event : page.events()) {
            if (current.inWindow(event.timeStampMillis())) {
                bodies.add(new PushBody(event));
            }
        }
        HeldEvents.Admitted admitted = held.admitPage(bodies);
        boolean waits = admitted.bodies().isEmpty() && admitted.refused() != null;
        // A page cut short by the budget is read again from where it stopped.
        long through = admitted.refused() != null ? admitted.refused().id() - 1
                : page.complete() ? upTo : page.lastReadId();
        boolean start;
        boolean blocked = false;
        boolean handedOver = false;
        synchronized (this) {
            if (closed || stopping) {
                reading = false;
                start = false;
            } else if (moves != movesBefore) {
                // Moved to another topic while it read: read again from where the move put it.
                cursors.read(this);
                start = false;
            } else {
                handedOver = true;
                held.take(admitted);
                boolean advanced = through > heldUpTo;
                heldUpTo = Math.max(heldUpTo, through);
                behind = offeredUpTo > heldUpTo;
                boolean queued = held.waiting() > 0 || redeliveries.waiting() > 0;
                // A redelivery may be in flight already: its POST's end takes the page next.
                start = queued && !sending;
                if (queued) {
                    reading = false;
                    sending = true;
                } else if (!behind) {
                    reading = false;
                    acknowledged = Math.max(acknowledged, heldUpTo);
                } else if (advanced && !waits) {
                    // A page of events that the subscription does not get: on to the next.
                    cursors.read(this);
                } else {
                    // In line: the budget's wake reads again. Otherwise the log had nothing past the cursor yet.
                    blocked = !waits;
                }
            }
        }
        if (!handedOver) {
            held.giveBack(admitted);
        }
        if (!waits || !handedOver) {
            held.leaveLine();
        }
        if (handedOver) {
            page.gaps().stream().filter(gap -> gap.requestedAfterId() < through)
                    .forEach(gap -> cursors.lost(this, new ReplayGap(gap.requestedAfterId(),
                            Math.min(gap.resumedAfterId(), through))));
        }
        if (start) {
            sender.start(this);
        }
        return !blocked;
    }

    /** Lets the buffer go (the log has it); the body in flight stays. */
    private void releaseBuffer() {
        if (held.waiting() == 0) {
            return;
        }
        held.dropWaiting();
        PushBody inFlight = held.inFlight();
        heldUpTo = inFlight != null ? inFlight.id() : acknowledged;
        behind = offeredUpTo > heldUpTo;
    }

    /** A subscriber that starts failing holds only the event being tried: the rest is read again when it is back. */
    @Override
    public synchronized boolean failedOnce() {
        if (failedInARow++ > 0) {
            return false;
        }
        releaseBuffer();
        return true;
    }

    @Override
    public synchronized int succeeded() {
        PushBody delivered = held.inFlight();
        if (delivered != null) {
            acknowledged = Math.max(acknowledged, delivered.id());
        }
        PushBody redelivered = redeliveries.inFlight();
        if (redelivered != null) {
            cursors.redelivered(this, redelivered.id());
        }
        setAsideInARow = 0;
        int failures = failedInARow;
        failedInARow = 0;
        return failures;
    }

    @Override
    public synchronized boolean closed() {
        return closed || stopping;
    }

    @Override
    public boolean durable() {
        return true;
    }

    @Override
    public synchronized int queued() {
        return held.waiting() + redeliveries.waiting();
    }

    /**
     * The cursor to save, if it moved since the last save. Not before a new cursor's first save has ended: the
     * periodic save would insert its row at the same time, and one of the two inserts fail (the subscribe, 503).
     *
     * @return the acknowledged id, or -1 if the database has it already (or is being given it by the subscribe)
     */
    synchronized long unsaved() {
        return following && saved >= 0 && acknowledged != saved ? acknowledged : -1;
    }

    /** The database has {@code cursor} now. */
    synchronized void saved(long cursor) {
        saved = Math.max(saved, cursor);
    }

    /** The server stops: no more is sent or read; the cursor stays where the subscriber's acknowledgements put it. */
    @Override
    public synchronized void stop() {
        stopping = true;
    }

    /** The subscription is gone: what it holds is let go, and its cursor with it. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            held.clear();
            redeliveries.clear();
        }
        cursors.forget(this);
    }
}

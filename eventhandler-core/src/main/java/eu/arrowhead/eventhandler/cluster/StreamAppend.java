package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import io.nats.client.api.PublishAck;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * One publish request's events on their way into the stream, with no thread waiting for them: they are sent
 * together, each acknowledgement arrives on jnats' thread, and what has to wait (a pause while the stream has no
 * leader, an acknowledgement that is overdue, the request's deadline) is timed on the publisher's clock, which
 * sends the events again when they are due. Sending happens outside the lock, after the step under it has decided
 * what to send.
 *
 * <p>An event that reached no stream is sent again after a pause, doubling with each of its sendings. A keyed
 * event whose acknowledgement is overdue is sent again at once (its message id has the stream store it once);
 * an unkeyed one waits for its first acknowledgement. A keyed event whose message id the stream holds for a write
 * not yet committed (a leader that lost its quorum) waits for that write, and is sent again after another
 * acknowledgement wait. At the deadline, or at the first refusal for good, the whole append fails; the events
 * acknowledged by then are stored, and a retry with the same key gets their ids.
 *
 * <p>Each sending holds a slot of the node's {@link PendingAcks} until jnats ends it: an append whose events' first
 * sendings find no room waits in line until they do, within its deadline, and an event due to be sent again while
 * there is none waits for one (its earlier sending is still awaited, and jnats gives up on one within seconds),
 * ahead of the line. A sending jnats still holds after the append has ended keeps the append, not its events.
 */
final class StreamAppend implements PendingAcks.Waiting {
    /**
     * Made beforehand, since what cannot be scheduled is most likely out of heap, and a refusal made then could fail
     * too: the slots would be lost. Shared: it has no stack trace and no state.
     */
    private static final UnavailableException NOT_TIMED = new UnavailableException("the Event Handler could not"
            + " time the publish (its heap exhausted); publish again with the same Idempotency-Key");

    /** Elections took 1-10 s in the failover tests: pauses short against that, doubling up to half a second. */
    private static final long FIRST_ELECTION_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(25);
    private static final long MAX_ELECTION_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** How soon an event due to be sent again while every slot is taken looks for one again. */
    private static final long SLOT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** {@link #sendAt}'s "not while its acknowledgement is awaited". */
    private static final long NEVER = Long.MAX_VALUE;

    private final StreamPublisher publisher;
    private final PendingAcks pendingAcks;
    private final ScheduledExecutorService clock;
    private final boolean keyed;
    private final long deadline;
    private final CompletableFuture<Stored> stored = new CompletableFuture<>();

    // Guarded by this.
    /** The events and their message ids; null once the append has ended. */
    private StreamPublisher.Request request;
    /** Each event's sequence once acknowledged; 0 before (the stream's sequences start at 1). */
    private final long[] ids;
    /** When each unacknowledged event is to be sent again ({@link System#nanoTime}), or {@link #NEVER}. */
    private final long[] sendAt;
    /** Each event's current attempt: a failure of an earlier one was overtaken by the event's next sending. */
    private final int[] attempts;
    /** Each event that was due to be sent again and found no slot, until it gets one. */
    private final boolean[] slotless;
    private int unacknowledged;
    private boolean repeat;
    private boolean leaderless;
    private boolean ended;
    /** Whether the events have their first slots (the append has left the line, or was never in it). */
    private boolean begun;
    /** Whether an event of this append waits for a slot to be sent again: new publishes wait then. */
    private boolean waitsForSlot;
    private ScheduledFuture<?> nextStep;
    private long nextStepAt = NEVER;

    /** The sequences the stream gave the events, and whether it had any of them already (a repeat). */
    record Stored(long[] ids, boolean repeat) {
    }

    StreamAppend(StreamPublisher publisher, PendingAcks pendingAcks, ScheduledExecutorService clock,
                 StreamPublisher.Request request, long deadline) {
        this.publisher = publisher;
        this.pendingAcks = pendingAcks;
        this.clock = clock;
        this.request = request;
        this.keyed = request.keyed();
        this.deadline = deadline;
        int count = request.events().size();
        this.ids = new long[count];
        this.sendAt = new long[count];
        this.attempts = new int[count];
        this.slotless = new boolean[count];
        this.unacknowledged = count;
        Arrays.fill(sendAt, NEVER);
    }

    /**
     * Sends every event, in order, on this thread if the node has room for their acknowledgements; else the append
     * waits in line for it, and its deadline is timed from now either way.
     */
    CompletableFuture<Stored> start() {
        if (pendingAcks.takeOrWait(this)) {
            begin();
            return stored;
        }
        UnavailableException refused = null;
        synchronized (this) {
            if (!begun && !ended) { // else the line has begun it already, and its steps are timed
                refused = scheduleNextStep(System.nanoTime());
                if (refused != null) {
                    end();
                }
            }
        }
        if (refused != null) {
            pendingAcks.leaveLine(this);
            stored.completeExceptionally(refused);
        }
        return stored;
    }

    @Override
    public int events() {
        return ids.length;
    }

    /**
     * The events' first slots are taken: sends every event, in order, unless the append has ended meanwhile or its
     * deadline has passed in line (the clock was late to its step): then it is refused having sent nothing.
     */
    @Override
    public void begin() {
        int count = ids.length;
        StreamPublisher.Request sending;
        UnavailableException refused = null;
        synchronized (this) {
            sending = request;
            long now = System.nanoTime();
            if (!ended && now - deadline >= 0) {
                refused = publisher.noRoom(count);
                end();
            } else if (!ended) {
                begun = true;
                Arrays.fill(sendAt, keyed ? now + StreamPublisher.ACK_WAIT.toNanos() : NEVER);
                Arrays.fill(attempts, 1);
                refused = scheduleNextStep(now);
                if (refused != null) {
                    end();
                }
            }
        }
        if (sending == null || refused != null) {
            pendingAcks.giveBack(count);
            if (refused != null) {
                stored.completeExceptionally(refused);
            }
            return;
        }
        for (int i = 0; i < count; i++) {
            send(sending, i, 1);
        }
    }

    /**
     * Sends an event whose slot is taken; the slot is given back when the sending ends. Whatever the sending
     * throws fails it, an error too (the heap exhausted while the message was made): a slot lost would be lost
     * for the node's life.
     */
    private void send(StreamPublisher.Request sending, int index, int attempt) {
        CompletableFuture<PublishAck> ack;
        try {
            ack = publisher.send(sending, index);
        } catch (RuntimeException | Error e) {
            ack = CompletableFuture.failedFuture(e);
        }
        ack.whenComplete(new Acknowledgement(index, attempt));
    }

    /** One sending of one event, told how it ended. */
    private final class Acknowledgement implements BiConsumer<PublishAck, Throwable> {
        private final int index;
        private final int attempt;

        Acknowledgement(int index, int attempt) {
            this.index = index;
            this.attempt = attempt;
        }

        @Override
        public void accept(PublishAck ack, Throwable failure) {
            pendingAcks.giveBack(1);
            if (failure == null) {
                acknowledged(index, ack);
            } else {
                failed(index, attempt, failure);
            }
        }
    }

    /** An acknowledgement counts from whichever sending of the event it answers: each stored it at this sequence. */
    private void acknowledged(int index, PublishAck ack) {
        Stored whole = null;
        synchronized (this) {
            if (ended || ids[index] != 0) {
                return;
            }
            ids[index] = ack.getSeqno();
            repeat |= ack.isDuplicate();
            if (--unacknowledged == 0) {
                end();
                whole = new Stored(ids.clone(), repeat);
            }
        }
        if (whole != null) {
            stored.complete(whole);
        }
    }

    private void failed(int index, int attempt, Throwable failure) {
        UnavailableException refused = null;
        synchronized (this) {
            if (ended || ids[index] != 0 || attempt != attempts[index]) {
                return;
            }
            long now = System.nanoTime();
            switch (StreamPublisher.classify(failure)) {
                case NOT_STORED -> {
                    leaderless = true;
                    sendAt[index] = now + pauseBefore(attempt);
                    refused = scheduleNextStep(now);
                }
                case IN_FLIGHT -> {
                    leaderless = false;
                    sendAt[index] = now + StreamPublisher.ACK_WAIT.toNanos();
                    refused = scheduleNextStep(now);
                }
                case UNANSWERED -> {
                    leaderless = false;
                    if (keyed) {
                        sendAt[index] = now;
                        refused = scheduleNextStep(now);
                    } else {
                        refused = publisher.unanswered();
                    }
                }
                default -> refused = new UnavailableException("the cluster's stream refused the event: "
                        + StreamPublisher.describe(failure));
            }
            if (refused != null) {
                end();
            }
        }
        if (refused != null) {
            stored.completeExceptionally(refused);
        }
    }

    /** On the clock: sends again the events that are due, or gives up at the deadline. */
    private void step() {
        List<int[]> due = new ArrayList<>();
        StreamPublisher.Request sending;
        UnavailableException refused;
        boolean inLine;
        synchronized (this) {
            if (ended) {
                return;
            }
            nextStep = null;
            nextStepAt = NEVER;
            sending = request;
            inLine = !begun;
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                refused = inLine ? publisher.noRoom(ids.length)
                        : leaderless ? publisher.leaderless(ids.length - unacknowledged, ids.length)
                        : publisher.unanswered();
            } else {
                boolean waits = false;
                for (int i = 0; i < ids.length; i++) {
                    if (ids[i] == 0 && sendAt[i] - now <= 0) {
                        slotless[i] = !pendingAcks.tryTakeAgain();
                        if (slotless[i]) {
                            sendAt[i] = now + SLOT_WAIT_NANOS;
                        } else {
                            attempts[i]++;
                            sendAt[i] = keyed ? now + StreamPublisher.ACK_WAIT.toNanos() : NEVER;
                            due.add(new int[] {i, attempts[i]});
                        }
                    }
                    waits |= ids[i] == 0 && slotless[i];
                }
                waitForSlot(waits);
                refused = scheduleNextStep(now);
            }
            if (refused != null) {
                end();
            }
        }
        if (refused != null) {
            pendingAcks.giveBack(due.size());
            if (inLine) {
                pendingAcks.leaveLine(this);
            }
            stored.completeExceptionally(refused);
            return;
        }
        for (int[] event : due) {
            send(sending, event[0], event[1]);
        }
    }

    /** Under the lock: tells the node's slots whether this append now waits for one. */
    private void waitForSlot(boolean waits) {
        if (waits != waitsForSlot) {
            waitsForSlot = waits;
            pendingAcks.awaitedBy(waits ? 1 : -1);
        }
    }

    /** The pause before an event that reached no stream at its {@code attempt}th sending goes again. */
    static long pauseBefore(int attempt) {
        return Math.min(MAX_ELECTION_PAUSE_NANOS, FIRST_ELECTION_PAUSE_NANOS << Math.min(attempt - 1, 5));
    }

    /**
     * Has the clock run {@link #step} when the next event is due or at the deadline, whichever comes first, unless
     * a step comes sooner already. Under the lock.
     *
     * @return the refusal, if the clock has stopped (the node is closing) or could not take the step (the heap
     *     exhausted): then no step is scheduled, and the caller gives back the slots the append holds, which would
     *     otherwise be lost for the node's life, and answers the publisher
     */
    private UnavailableException scheduleNextStep(long now) {
        long at = deadline;
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == 0 && sendAt[i] - at < 0) {
                at = sendAt[i];
            }
        }
        if (nextStep != null && nextStepAt - at <= 0) {
            return null;
        }
        if (nextStep != null) {
            nextStep.cancel(false);
        }
        try {
            nextStep = clock.schedule(this::step, Math.max(0, at - now), TimeUnit.NANOSECONDS);
            nextStepAt = at;
            return null;
        } catch (RejectedExecutionException e) {
            return new UnavailableException("the Event Handler is shutting down; publish again with the same"
                    + " Idempotency-Key");
        } catch (RuntimeException | Error e) {
            return NOT_TIMED;
        }
    }

    /** Under the lock: nothing more is sent, and the clock forgets the append. */
    private void end() {
        ended = true;
        request = null;
        waitForSlot(false);
        if (nextStep != null) {
            nextStep.cancel(false);
            nextStep = null;
        }
    }
}

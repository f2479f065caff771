package eu.arrowhead.eventhandler.cluster;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The acknowledgements a node awaits from the stream, each sending of an event one, held within
 * {@code cluster.max-pending-acks}. jnats keeps every sending it has not had an answer for in its table of
 * awaited answers until the answer comes or, for one never answered (a server that died or froze, a leader that
 * lost its quorum), until its cleanup gives up on it 5-10 s later. A keyed event unanswered is sent again every
 * {@link StreamPublisher#ACK_WAIT}: without a bound, an election would multiply what every waiting publish holds
 * by the sendings of its events, beyond what the heap holds on a small node.
 *
 * <p>A publish takes a slot for each of its events before it sends any. One that finds no room waits in line,
 * first come first served, and starts when its slots are free; its deadline ends the wait. What it holds while it
 * waits is its request, which the node's admission already counted. An event sent again takes one when there is
 * one, and waits for one otherwise (its earlier sending is still awaited). The events of publishes the node has
 * started come first: while any of them waits for a slot, the line does not move, or the slots jnats frees in
 * bursts at its cleanup would go to new publishes and the started ones would run out their deadline. A slot is
 * given back when jnats ends the sending, however it ends.
 *
 * <p>The line moves on the publisher's clock ({@link #moveLine}), one publish after another, so the publishes of
 * one connection are sent in the order they came, and no jnats thread sends while it delivers answers.
 */
final class PendingAcks {
    /** A publish waiting in line for its slots. */
    interface Waiting {
        /** The slots it needs: one per event. */
        int events();

        /**
         * Its slots are taken: it sends its events, or gives the slots back if it has ended or its deadline has
         * passed meanwhile.
         */
        void begin();
    }

    private final int limit;
    private final Executor clock;
    private final AtomicInteger taken = new AtomicInteger();
    /** Appends with an event due to be sent again and no slot for it. */
    private final AtomicInteger waitingAppends = new AtomicInteger();
    /**
     * Publishes in line or taken from it and not yet begun: while any is, a new publish goes to the back of the
     * line. Read without the lock where slots come back, so that a slot given back costs one volatile read when
     * nobody waits.
     */
    private volatile int inLine;

    // Guarded by this.
    private final ArrayDeque<Waiting> line = new ArrayDeque<>();
    private boolean lineMoving;

    PendingAcks(int limit, Executor clock) {
        this.limit = limit;
        this.clock = clock;
    }

    /**
     * Takes {@code publish}'s slots now, or puts it in line; a publish in line is begun on the clock when its slots
     * are free.
     *
     * @return whether the slots were taken now (the caller begins the publish)
     */
    boolean takeOrWait(Waiting publish) {
        // Without the lock while nobody waits: a publish that slips past one joining the line at the same moment
        // came from another connection (one connection's next publish is read only once this one is answered).
        if (inLine == 0 && waitingAppends.get() == 0 && tryTake(publish.events())) {
            return true;
        }
        synchronized (this) {
            if (inLine == 0 && waitingAppends.get() == 0 && tryTake(publish.events())) {
                return true;
            }
            line.addLast(publish);
            inLine++;
        }
        // Slots may have come back between the look above and the line growing, with nobody in line to see them.
        lineMayMove();
        return false;
    }

    /** Takes {@code publish} out of the line (its deadline passed); nothing if it has left it already. */
    void leaveLine(Waiting publish) {
        synchronized (this) {
            if (line.remove(publish)) {
                inLine--;
            }
        }
        lineMayMove();
    }

    /** Takes a slot for an event sent again. */
    boolean tryTakeAgain() {
        return tryTake(1);
    }

    /** An append begins ({@code +1}) or stops ({@code -1}) waiting for a slot. */
    void awaitedBy(int change) {
        if (waitingAppends.addAndGet(change) == 0 && inLine != 0) {
            lineMayMove();
        }
    }

    void giveBack(int count) {
        taken.addAndGet(-count);
        if (inLine != 0) {
            lineMayMove();
        }
    }

    private boolean tryTake(int count) {
        while (true) {
            int now = taken.get();
            if (now + count > limit) {
                return false;
            }
            if (taken.compareAndSet(now, now + count)) {
                return true;
            }
        }
    }

    /** Has the clock move the line, unless it does already. */
    private void lineMayMove() {
        synchronized (this) {
            if (lineMoving || line.isEmpty()) {
                return;
            }
            lineMoving = true;
        }
        try {
            clock.execute(this::moveLine);
        } catch (RejectedExecutionException e) {
            // The node is stopping: the line stays where it is, and each publish in it ends at its deadline (the
            // clock still runs the steps scheduled before it stopped).
            synchronized (this) {
                lineMoving = false;
            }
        }
    }

    /**
     * Begins the publishes at the head of the line while their slots are free, one after another, outside the
     * lock: the slots are taken under it, the events sent after it. A publish counts as in line until it has
     * begun, so that none overtakes it meanwhile.
     */
    private void moveLine() {
        while (true) {
            Waiting next;
            synchronized (this) {
                next = line.peekFirst();
                if (next == null || waitingAppends.get() != 0 || !tryTake(next.events())) {
                    lineMoving = false;
                    return;
                }
                line.removeFirst();
            }
            boolean begun = false;
            try {
                next.begin();
                begun = true;
            } finally {
                synchronized (this) {
                    inLine--;
                    if (!begun) {
                        // An error out of begin (the heap exhausted): the line must not stand still for good.
                        lineMoving = false;
                    }
                }
            }
        }
    }

    int limit() {
        return limit;
    }

    /** Slots taken now. */
    int taken() {
        return taken.get();
    }

    /** Publishes waiting in line now. */
    synchronized int waiting() {
        return line.size();
    }
}

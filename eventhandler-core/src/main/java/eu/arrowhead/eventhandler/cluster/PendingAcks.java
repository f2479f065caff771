package eu.arrowhead.eventhandler.cluster;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The acknowledgements a node awaits from the stream, each sending of an event one, held within
 * {@code cluster.max-pending-acks}. jnats keeps every sending it has not had an answer for in its table of
 * awaited answers until the answer comes or, for one never answered (a server that died or froze, a leader that
 * lost its quorum), until its cleanup gives up on it 5-10 s later. A keyed event unanswered is sent again every
 * {@link StreamPublisher#ACK_WAIT}: without a bound, an election would multiply what every waiting publish holds
 * by the sendings of its events, beyond what the heap holds on a small node.
 *
 * <p>A publish takes a slot for each of its events before it sends any, or is refused at once (503); an event
 * sent again takes one when there is one, and waits for one otherwise (its earlier sending is still awaited). The
 * events of publishes the node has taken come first: while any of them waits for a slot, new publishes are
 * refused, or the slots jnats frees in bursts at its cleanup would go to new publishes and the waiting ones would
 * run out their deadline. A slot is given back when jnats ends the sending, however it ends.
 */
final class PendingAcks {
    private final int limit;
    private final AtomicInteger taken = new AtomicInteger();
    /** Appends with an event due to be sent again and no slot for it. */
    private final AtomicInteger waitingAppends = new AtomicInteger();

    PendingAcks(int limit) {
        this.limit = limit;
    }

    /** Takes {@code count} slots for a new publish, all or none, unless events sent again are waiting for one. */
    boolean tryTakeForNew(int count) {
        return waitingAppends.get() == 0 && tryTake(count);
    }

    /** Takes a slot for an event sent again. */
    boolean tryTakeAgain() {
        return tryTake(1);
    }

    /** An append begins ({@code +1}) or stops ({@code -1}) waiting for a slot. */
    void awaitedBy(int change) {
        waitingAppends.addAndGet(change);
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

    void giveBack(int count) {
        taken.addAndGet(-count);
    }

    int limit() {
        return limit;
    }

    /** Slots taken now. */
    int taken() {
        return taken.get();
    }
}

package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.topic.PublishedEvent;

/**
 * The frames waiting to be written to one SSE subscriber, bounded in bytes by a {@link QueueBudget}.
 *
 * <p>Most subscribers are idle or keep up, so the queue costs nothing until it holds something: its ring
 * of references is allocated at the first offer, doubles as the subscriber falls behind, and is given back
 * once emptied after it had grown (a small ring is kept while the subscriber is being written to, so that
 * a subscriber that keeps up does not allocate one per event).
 *
 * <p>Producers are the publisher holding the hub's lock and the supervisor's heartbeats; the consumer is
 * the subscriber's writer. This object's monitor guards only these few fields, never a socket write, so a
 * publisher never waits for a writer.
 */
final class FrameQueue {
    private static final int FIRST_CAPACITY = 16;

    private final QueueBudget budget;
    private PublishedEvent[] ring;
    private int head;
    private int size;
    private long bytes;
    private boolean closed;

    FrameQueue(QueueBudget budget) {
        this.budget = budget;
    }

    /**
     * Queues the event, unless the subscriber would then hold more than the budget allows.
     *
     * @return false if the subscriber has fallen too far behind (the event is not queued); true if it was
     *         queued, or dropped because the queue is closed
     */
    synchronized boolean offer(PublishedEvent event) {
        if (closed) {
            event.dropped();
            return true;
        }
        long cost = QueueBudget.cost(event.frame().length);
        if (!budget.admits(bytes, cost)) {
            return false;
        }
        if (ring == null) {
            ring = new PublishedEvent[FIRST_CAPACITY];
        } else if (size == ring.length) {
            grow();
        }
        ring[(head + size) & (ring.length - 1)] = event;
        size++;
        bytes += cost;
        budget.took(cost, bytes);
        return true;
    }

    /** The oldest queued event, or {@code null}. */
    synchronized PublishedEvent poll() {
        if (size == 0) {
            return null;
        }
        PublishedEvent event = ring[head];
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        size--;
        long cost = QueueBudget.cost(event.frame().length);
        bytes -= cost;
        budget.released(cost);
        if (size == 0) {
            head = 0;
            if (ring.length > FIRST_CAPACITY) {
                ring = null;
            }
        }
        return event;
    }

    synchronized boolean isEmpty() {
        return size == 0;
    }

    synchronized int size() {
        return size;
    }

    synchronized long bytes() {
        return bytes;
    }

    /**
     * Empties the queue for good and gives its bytes back; later offers are dropped.
     *
     * @param countDropped whether the events it held count as dropped (the subscriber lost them) rather
     *                     than left for its resume (a refusal or a replay page)
     * @return the number of events it held
     */
    synchronized int close(boolean countDropped) {
        closed = true;
        int held = size;
        for (PublishedEvent event; (event = poll()) != null; ) {
            if (countDropped) {
                event.dropped();
            }
        }
        ring = null;
        return held;
    }

    /** Empties the queue, which stays open (a stream that carries a replay page wants no live events). */
    synchronized void clear() {
        while (poll() != null) {
            // each poll gives its bytes back
        }
    }

    private void grow() {
        PublishedEvent[] bigger = new PublishedEvent[ring.length * 2];
        int firstPart = ring.length - head;
        System.arraycopy(ring, head, bigger, 0, firstPart);
        System.arraycopy(ring, 0, bigger, firstPart, head);
        ring = bigger;
        head = 0;
    }
}

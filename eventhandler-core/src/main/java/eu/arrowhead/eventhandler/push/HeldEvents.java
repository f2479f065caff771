package eu.arrowhead.eventhandler.push;

import java.util.ArrayDeque;

/**
 * The events one push subscription holds in memory, each charged to the {@link PushBudget} from when it is added
 * until it is sent (delivered, or needs no POST, or is given up) or let go: those waiting, in id order, and the
 * one in flight (being POSTed or waiting for its retry). Not thread-safe: its owner's monitor guards it.
 */
final class HeldEvents {
    private final PushBudget budget;
    private final ArrayDeque<PushBody> waiting = new ArrayDeque<>();
    private long bytes;
    private PushBody inFlight;

    HeldEvents(PushBudget budget) {
        this.budget = budget;
    }

    /** Whether the budget has room for {@code body} beside what this subscription holds. */
    boolean admits(PushBody body) {
        return budget.admits(bytes, PushBudget.cost(body));
    }

    /** Adds a body after those waiting; the caller checked {@link #admits} or holds it whatever the budget. */
    void add(PushBody body) {
        long cost = PushBudget.cost(body);
        waiting.add(body);
        bytes += cost;
        budget.took(cost);
    }

    /** The body in flight, or {@code null}. */
    PushBody inFlight() {
        return inFlight;
    }

    /** The body in flight is done with: its charge goes back. */
    void sent() {
        if (inFlight != null) {
            release(inFlight);
            inFlight = null;
        }
    }

    /** {@link #sent}, then the next waiting body goes in flight; {@code null} when none waits. */
    PushBody next() {
        sent();
        inFlight = waiting.poll();
        return inFlight;
    }

    /** Lets the oldest waiting body go. */
    void dropOldest() {
        release(waiting.poll());
    }

    /** Lets every waiting body go; the one in flight stays. */
    void dropWaiting() {
        waiting.forEach(this::release);
        waiting.clear();
    }

    /** Lets everything go, the body in flight too. */
    void clear() {
        dropWaiting();
        sent();
    }

    /** Whether it holds nothing, neither waiting nor in flight. */
    boolean isEmpty() {
        return waiting.isEmpty() && inFlight == null;
    }

    int waiting() {
        return waiting.size();
    }

    private void release(PushBody body) {
        long cost = PushBudget.cost(body);
        bytes -= cost;
        budget.released(cost);
    }
}

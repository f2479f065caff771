package eu.arrowhead.eventhandler.push;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The events one push subscription holds in memory, each charged to the {@link PushBudget} from when it is added
 * until it is sent (delivered, or needs no POST, or is given up) or let go: those waiting, in id order, and the
 * one in flight (being POSTed or waiting for its retry). Not thread-safe: its owner's monitor guards it.
 */
final class HeldEvents {
    private final PushBudget budget;
    /** Its place in the budget's line, for {@link #admitPage}; {@code null} for a queue that never waits. */
    private final PushBudget.Waiter waiter;
    private ArrayDeque<PushBody> waiting = new ArrayDeque<>();
    private long bytes;
    private PushBody inFlight;

    HeldEvents(PushBudget budget) {
        this(budget, null);
    }

    /** @param wakeWhenRoom asks its owner to read again once the budget has room for its next event */
    HeldEvents(PushBudget budget, Runnable wakeWhenRoom) {
        this.budget = budget;
        this.waiter = wakeWhenRoom == null ? null : new PushBudget.Waiter(wakeWhenRoom);
    }

    /** Whether the budget has room for {@code body} beside what this subscription holds. */
    boolean admits(PushBody body) {
        return budget.admits(bytes, PushBudget.cost(body));
    }

    /** Adds a body after those waiting; the caller checked {@link #admits}. */
    void add(PushBody body) {
        long cost = PushBudget.cost(body);
        waiting.add(body);
        bytes += cost;
        budget.took(cost);
    }

    /**
     * Adds a body after those waiting if the budget has room for it, checked and charged in one step.
     *
     * @param besides what its owner holds elsewhere, counted against the same share
     */
    boolean tryAdd(PushBody body, long besides) {
        long cost = PushBudget.cost(body);
        if (!budget.tryTake(bytes + besides, cost)) {
            return false;
        }
        waiting.add(body);
        bytes += cost;
        return true;
    }

    /**
     * Adds a body for an owner that holds nothing: past its share, up to the queues' half
     * ({@link PushBudget#takeAlone}).
     */
    boolean tryAddAlone(PushBody body) {
        long cost = PushBudget.cost(body);
        if (!budget.takeAlone(cost)) {
            return false;
        }
        waiting.add(body);
        bytes += cost;
        return true;
    }

    /**
     * Charges the budget for the longest start of {@code page} that it has room for, for an owner that holds
     * nothing; the first body may take room past the owner's share ({@link PushBudget#takeFirst}), and if even that
     * is refused, the owner is in line and is woken when there is room. Touches only the budget, so it runs
     * outside the owner's monitor: what is charged is handed over with {@link #take}, or given back.
     */
    Admitted admitPage(List<PushBody> page) {
        ArrayDeque<PushBody> taken = new ArrayDeque<>(page.size());
        long charged = 0;
        for (PushBody body : page) {
            long cost = PushBudget.cost(body);
            if (taken.isEmpty() ? !budget.takeFirst(waiter, cost) : !budget.tryTake(charged, cost)) {
                return new Admitted(taken, charged, body);
            }
            taken.add(body);
            charged += cost;
        }
        return new Admitted(taken, charged, null);
    }

    /** Adds what {@link #admitPage} charged after those waiting: in one step, the page's own queue, if none wait. */
    void take(Admitted admitted) {
        if (waiting.isEmpty()) {
            waiting = admitted.bodies();
        } else {
            waiting.addAll(admitted.bodies());
        }
        bytes += admitted.bytes();
    }

    /** Gives back what {@link #admitPage} charged and was not taken. */
    void giveBack(Admitted admitted) {
        budget.released(admitted.bytes());
    }

    /** Leaves the budget's line, if it is in it: the owner reads no more for now, or got its room. */
    void leaveLine() {
        if (waiter != null) {
            budget.leave(waiter);
        }
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

    /** Lets everything go, the body in flight and its place in the budget's line too. */
    void clear() {
        dropWaiting();
        sent();
        leaveLine();
    }

    /** Whether it holds nothing, neither waiting nor in flight. */
    boolean isEmpty() {
        return waiting.isEmpty() && inFlight == null;
    }

    int waiting() {
        return waiting.size();
    }

    /** The bytes it is charged for, waiting and in flight. */
    long bytes() {
        return bytes;
    }

    /** Whether it holds the event {@code id}, waiting or in flight. */
    boolean holds(long id) {
        return inFlight != null && inFlight.id() == id || waiting.stream().anyMatch(body -> body.id() == id);
    }

    private void release(PushBody body) {
        long cost = PushBudget.cost(body);
        bytes -= cost;
        budget.released(cost);
    }

    /**
     * Bodies of a page charged to the budget, not yet held.
     *
     * @param refused the first body the budget had no room for, or {@code null}: the page is cut before it
     */
    record Admitted(ArrayDeque<PushBody> bodies, long bytes, PushBody refused) {
    }
}

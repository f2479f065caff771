package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Push subscriptions and their queues stay within push.total-max-bytes; one that keeps up is not touched; a
 * cursor whose next event does not fit waits in line and gets it once there is room.
 */
class PushBudgetTest {
    private static final int EVENTS_EACH = 3;

    @Test
    void aSubscriberThatFellBehindLosesItsOldestWhileOneThatKeepsUpIsAdmitted() {
        PushBudget budget = new PushBudget(4_000);
        assertTrue(budget.reserveSubscription(100));
        assertTrue(budget.reserveSubscription(100));
        long behind = 0;
        while (budget.admits(behind, 100)) {
            budget.took(100);
            behind += 100;
        }
        // Past a quarter of the total (half of the queues' half), a queue is held to its share: 1 000 / 2.
        assertEquals(1_000, behind);
        assertFalse(budget.admits(behind, 100), "the one behind gives up its oldest");
        assertTrue(budget.admits(0, 100), "the one that keeps up goes on");
        assertTrue(budget.admits(400, 100), "up to its share");
        assertFalse(budget.admits(500, 100));
    }

    @Test
    void subscriptionsTakeAtMostHalfAndGiveItBack() {
        PushBudget budget = new PushBudget(4_000);
        assertTrue(budget.reserveSubscription(1_500));
        assertFalse(budget.reserveSubscription(600), "past half of the total");
        assertEquals(1_500, budget.subscriptionBytes());
        budget.releaseSubscription(1_500);
        assertTrue(budget.reserveSubscription(2_000));
        budget.chargeSubscription(1_000);
        assertTrue(budget.subscriptionsOverBudget(), "stored subscriptions are loaded whatever their size");
    }

    /**
     * A thousand cursors, each with a backlog of 60 KB events in the log, the subscriber answering one POST per
     * cursor at a time: what they hold never passes the queues' half (before, each took its first event whatever
     * the budget: 60 MB here), and each gets every event of its backlog, in order, once, as room frees.
     */
    @Test
    void manyCursorsWithLargeEventsStayWithinTheHalfAndGetEveryEventOnceThereIsRoom() {
        PushBudget budget = new PushBudget(2 << 20);
        Backlogs backlogs = new Backlogs(budget, 1_000, 60_000);
        backlogs.readAll(List.copyOf(backlogs.all()), 1 << 20);
        int holding = backlogs.holding();
        assertTrue(holding > 0 && holding < 20, "a few fit the half, not a thousand: " + holding);
        assertEquals(1_000 - holding, budget.waiting(), "the others wait in line, none read again and again");
        backlogs.deliverAll(1 << 20);
        assertEquals(0, budget.queuedBytes());
        assertEquals(0, budget.waiting());
    }

    /** An event larger than the queues' half goes alone, once they hold nothing: it does not stop its cursor. */
    @Test
    void anEventLargerThanTheHalfGoesAloneOnceTheQueuesHoldNothing() {
        PushBudget budget = new PushBudget(32_768);
        Backlogs backlogs = new Backlogs(budget, 50, 20_000);
        long oneEvent = backlogs.largestCost();
        assertTrue(oneEvent > 16_384, "larger than the queues' half: " + oneEvent);
        backlogs.readAll(List.copyOf(backlogs.all()), oneEvent);
        assertEquals(1, backlogs.holding());
        assertEquals(49, budget.waiting());
        backlogs.deliverAll(oneEvent);
        assertEquals(0, budget.queuedBytes());
    }

    /**
     * Cursors that each read their backlog as {@link LogCursor#readPage} does, driven on the test's thread: a
     * wake from the line is a read asked for, run in turn.
     */
    private static final class Backlogs {
        private final PushBudget budget;
        private final List<HeldEvents> held = new ArrayList<>();
        private final List<List<PushBody>> logs = new ArrayList<>();
        private final int[] read;
        private final List<List<Long>> delivered = new ArrayList<>();
        private final ArrayDeque<Integer> woken = new ArrayDeque<>();

        Backlogs(PushBudget budget, int cursors, int payloadChars) {
            this.budget = budget;
            this.read = new int[cursors];
            EventValidator validator = new EventValidator(65_536, Duration.ofMinutes(2));
            long id = 0;
            for (int i = 0; i < cursors; i++) {
                int cursor = i;
                assertTrue(budget.reserveSubscription(1));
                held.add(new HeldEvents(budget, () -> woken.add(cursor)));
                List<PushBody> log = new ArrayList<>();
                for (int e = 0; e < EVENTS_EACH; e++) {
                    log.add(new PushBody(PublishedEvent.logged(++id, validator.validate(new EventPublishRequest(
                            "reading", "x".repeat(payloadChars), null, SystemRequest.named("sensor"), null),
                            Instant.now(), ""))));
                }
                logs.add(log);
                delivered.add(new ArrayList<>());
            }
        }

        List<Integer> all() {
            return IntStream.range(0, held.size()).boxed().toList();
        }

        /** Each cursor reads its next page, then each woken one, until none is woken; the bound checked each time. */
        void readAll(List<Integer> cursors, long bound) {
            ArrayDeque<Integer> due = new ArrayDeque<>(cursors);
            while (!due.isEmpty() || !woken.isEmpty()) {
                int cursor = due.isEmpty() ? woken.poll() : due.poll();
                List<PushBody> log = logs.get(cursor);
                HeldEvents.Admitted admitted = held.get(cursor).admitPage(log.subList(read[cursor], log.size()));
                held.get(cursor).take(admitted);
                read[cursor] += admitted.bodies().size();
                assertTrue(budget.queuedBytes() <= bound, budget.queuedBytes() + " bytes held");
            }
        }

        int holding() {
            return (int) held.stream().filter(events -> events.waiting() > 0).count();
        }

        long largestCost() {
            return logs.stream().flatMap(List::stream).mapToLong(PushBudget::cost).max().orElseThrow();
        }

        /** Rounds of: every cursor holding events sends them all, then those with more to read read again. */
        void deliverAll(long bound) {
            for (int round = 0; IntStream.of(read).anyMatch(count -> count < EVENTS_EACH) || holding() > 0;
                 round++) {
                assertTrue(round < 100_000, "no progress");
                List<Integer> emptied = new ArrayList<>();
                for (int cursor = 0; cursor < held.size(); cursor++) {
                    HeldEvents events = held.get(cursor);
                    if (events.waiting() > 0) {
                        for (PushBody body = events.next(); body != null; body = events.next()) {
                            delivered.get(cursor).add(body.id());
                        }
                        emptied.add(cursor);
                    }
                }
                readAll(emptied.stream().filter(cursor -> read[cursor] < EVENTS_EACH).toList(), bound);
            }
            for (int cursor = 0; cursor < held.size(); cursor++) {
                assertEquals(logs.get(cursor).stream().map(PushBody::id).toList(), delivered.get(cursor),
                        "cursor " + cursor + ": every event, in order, once");
            }
        }
    }
}

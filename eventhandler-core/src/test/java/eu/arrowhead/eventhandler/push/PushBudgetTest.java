package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Push subscriptions and their queues stay within push.total-max-bytes; one that keeps up is not touched. */
class PushBudgetTest {

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
}

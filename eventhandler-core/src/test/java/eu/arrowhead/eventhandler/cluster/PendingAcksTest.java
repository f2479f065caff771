package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The slots of the acknowledgements a node awaits: a publish takes all its events' or none, sent-again first. */
class PendingAcksTest {
    @Test
    void aPublishTakesASlotForEachOfItsEventsOrNone() {
        PendingAcks slots = new PendingAcks(10);
        assertTrue(slots.tryTakeForNew(6));
        assertFalse(slots.tryTakeForNew(5), "6 + 5 is more than 10");
        assertEquals(6, slots.taken(), "a refused publish takes nothing");
        assertTrue(slots.tryTakeForNew(4));
        slots.giveBack(3);
        assertEquals(7, slots.taken());
    }

    @Test
    void eventsSentAgainComeBeforeNewPublishes() {
        PendingAcks slots = new PendingAcks(2);
        assertTrue(slots.tryTakeForNew(2));
        assertFalse(slots.tryTakeAgain(), "no slot left");
        slots.awaitedBy(1);
        slots.giveBack(2);
        assertFalse(slots.tryTakeForNew(1), "a new publish waits while an event sent again waits");
        assertTrue(slots.tryTakeAgain());
        slots.awaitedBy(-1);
        assertTrue(slots.tryTakeForNew(1));
        assertEquals(2, slots.taken());
    }
}

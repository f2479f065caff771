package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The slots of the acknowledgements a node awaits: a publish takes all its events' or waits in line, first come
 * first served, behind the events sent again. The line moves on the caller's thread, or on a clock the test turns
 * by hand (the node's publisher clock in the node).
 */
class PendingAcksTest {
    private final List<String> begun = new ArrayList<>();
    private final List<Runnable> clock = new ArrayList<>();

    /** A publish that notes when it begins, as an append sends its events then, and does {@code meanwhile}. */
    private final class Publish implements PendingAcks.Waiting {
        private final String name;
        private final int events;
        private final Runnable meanwhile;

        Publish(String name, int events) {
            this(name, events, () -> { });
        }

        Publish(String name, int events, Runnable meanwhile) {
            this.name = name;
            this.events = events;
            this.meanwhile = meanwhile;
        }

        @Override
        public int events() {
            return events;
        }

        @Override
        public void begin() {
            meanwhile.run();
            begun.add(name);
        }
    }

    /** Runs what was handed to the clock so far. */
    private void turnClock() {
        List<Runnable> due = List.copyOf(clock);
        clock.clear();
        due.forEach(Runnable::run);
    }

    @Test
    void aPublishTakesASlotForEachOfItsEventsOrWaitsInLine() {
        PendingAcks slots = new PendingAcks(10, Runnable::run);
        assertTrue(slots.takeOrWait(new Publish("a", 6)));
        assertFalse(slots.takeOrWait(new Publish("b", 5)), "6 + 5 is more than 10");
        assertEquals(6, slots.taken(), "a publish in line takes nothing");
        assertEquals(1, slots.waiting());
        assertFalse(slots.takeOrWait(new Publish("c", 1)), "a publish that fits waits behind the line");
        slots.giveBack(1);
        assertEquals(List.of("b"), begun, "b fits in the 5 free slots, and c behind it no longer");
        slots.giveBack(1);
        assertEquals(List.of("b", "c"), begun, "both begun, in the order they came, once their slots were free");
        assertEquals(10, slots.taken());
        assertEquals(0, slots.waiting());
        assertTrue(slots.takeOrWait(new Publish("d", 0)), "the line is empty again");
    }

    @Test
    void eventsSentAgainComeBeforeTheLine() {
        PendingAcks slots = new PendingAcks(2, Runnable::run);
        assertTrue(slots.takeOrWait(new Publish("a", 2)));
        assertFalse(slots.tryTakeAgain(), "no slot left");
        slots.awaitedBy(1);
        slots.giveBack(2);
        assertFalse(slots.takeOrWait(new Publish("b", 1)), "a new publish waits while an event sent again waits");
        assertEquals(List.of(), begun);
        assertTrue(slots.tryTakeAgain());
        slots.awaitedBy(-1);
        assertEquals(List.of("b"), begun, "the line moves once no event sent again waits");
        assertEquals(2, slots.taken());
    }

    @Test
    void aPublishThatLeftTheLineIsNotBegun() {
        PendingAcks slots = new PendingAcks(3, Runnable::run);
        Publish late = new Publish("late", 3);
        assertTrue(slots.takeOrWait(new Publish("a", 2)));
        assertFalse(slots.takeOrWait(late));
        assertFalse(slots.takeOrWait(new Publish("b", 1)));
        slots.leaveLine(late);
        assertEquals(List.of("b"), begun, "the one behind moves up as the head leaves");
        slots.giveBack(3);
        assertEquals(List.of("b"), begun);
        assertEquals(0, slots.taken());
        assertEquals(0, slots.waiting());
    }

    @Test
    void aPublishArrivingWhileTheHeadOfTheLineBeginsGoesBehindIt() {
        PendingAcks slots = new PendingAcks(2, clock::add);
        assertTrue(slots.takeOrWait(new Publish("a", 2)));
        assertFalse(slots.takeOrWait(new Publish("b", 1, () -> assertFalse(slots.takeOrWait(new Publish("c", 1)),
                "c arrived while b, taken out of the line, was beginning: it must not overtake b"))));
        slots.giveBack(2);
        assertEquals(List.of(), begun, "the line moves on the clock, not on the thread that gave slots back");
        turnClock();
        assertEquals(List.of("b", "c"), begun);
        assertEquals(2, slots.taken());
    }

    @Test
    void anErrorOutOfABeginDoesNotStopTheLine() {
        PendingAcks slots = new PendingAcks(2, clock::add);
        assertTrue(slots.takeOrWait(new Publish("a", 2)));
        assertFalse(slots.takeOrWait(new Publish("broken", 1, () -> {
            throw new OutOfMemoryError("made in the test");
        })));
        assertFalse(slots.takeOrWait(new Publish("b", 2)));
        slots.giveBack(2);
        assertThrows(OutOfMemoryError.class, this::turnClock);
        slots.giveBack(1); // what the broken publish took
        turnClock();
        assertEquals(List.of("b"), begun, "the line moved on after the error");
        slots.giveBack(2);
        assertTrue(slots.takeOrWait(new Publish("d", 2)), "and a new publish takes its slots at once again");
    }
}

package eu.arrowhead.eventhandler.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The queues' bounds in bytes: one subscriber's, and all together's, and the queue that grows and shrinks. */
class FrameQueueTest {
    /** A frame that costs 100 bytes in a queue. */
    private static final PublishedEvent FRAME = PublishedEvent.control(new byte[100 - (int) QueueBudget.ENTRY_BYTES]);

    @Test
    void aQueueKeepsOrderAcrossGrowingAndGivesEveryByteBack() {
        QueueBudget budget = new QueueBudget(1_000_000, 4_000_000, 10);
        FrameQueue queue = new FrameQueue(budget);
        List<PublishedEvent> offered = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 1_000; i++) {
                PublishedEvent event = PublishedEvent.control(("e" + i + "\n\n").getBytes(StandardCharsets.US_ASCII));
                offered.add(event);
                assertTrue(queue.offer(event));
                if (i % 3 == 0) {
                    assertSame(offered.remove(0), queue.poll(), "first in, first out while the ring grows");
                }
            }
            while (!offered.isEmpty()) {
                assertSame(offered.remove(0), queue.poll());
            }
            assertNull(queue.poll());
            assertEquals(0, queue.bytes());
            assertEquals(0, budget.queued());
        }
    }

    @Test
    void oneSubscriberHoldsAtMostItsBound() {
        QueueBudget budget = new QueueBudget(1_000, 1_000_000, 10);
        FrameQueue queue = new FrameQueue(budget);
        for (int i = 0; i < 10; i++) {
            assertTrue(queue.offer(FRAME), "frame " + i);
        }
        assertFalse(queue.offer(FRAME), "the eleventh would pass 1 000 bytes");
        assertEquals(1_000, queue.bytes());
        queue.poll();
        assertTrue(queue.offer(FRAME), "room again once the subscriber has taken one");
    }

    @Test
    void allQueuesTogetherNeverPassTheTotalAndThoseAboveTheirShareGoFirst() {
        int subscribers = 10;
        // Half of 10 000 may be held freely; above that, each may hold its share, 5 000 / 10 = 500.
        QueueBudget budget = new QueueBudget(4_000, 10_000, subscribers);
        List<FrameQueue> queues = new ArrayList<>();
        for (int i = 0; i < subscribers; i++) {
            queues.add(new FrameQueue(budget));
        }
        FrameQueue behind = queues.get(0);
        for (int i = 0; i < 40; i++) {
            assertTrue(behind.offer(FRAME));
        }
        FrameQueue alsoBehind = queues.get(1);
        for (int i = 0; i < 10; i++) {
            assertTrue(alsoBehind.offer(FRAME));
        }
        assertEquals(5_000, budget.queued(), "half the total is held");
        assertFalse(behind.offer(FRAME), "over half the total, a queue above its share may not grow");
        assertFalse(alsoBehind.offer(FRAME));
        for (FrameQueue keepingUp : queues.subList(2, subscribers)) {
            for (int i = 0; i < 5; i++) {
                assertTrue(keepingUp.offer(FRAME), "a queue within its share still may");
            }
            assertFalse(keepingUp.offer(FRAME), "but not past it");
        }
        assertEquals(9_000, budget.queued());
        assertTrue(budget.peakTotal() <= 10_000);
        assertEquals(4_000, budget.peakQueue());

        assertEquals(40, behind.close(true), "cutting it off gives its bytes back");
        assertEquals(5_000, budget.queued());
        assertTrue(behind.offer(FRAME), "a closed queue takes no more, without overflowing");
        assertEquals(0, behind.bytes());
    }
}

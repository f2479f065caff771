package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The bench's verdicts on delivery: what it counts as lost, duplicated, out of order or under a wrong id. */
class DeliveryLogTest {
    private static final String TYPE = "bench.a";

    /** Two publishers with 3 events each, none of them warm-up; ids 10 upwards in send order. */
    private static Sends sends() {
        Sends sends = new Sends(2, 3);
        long id = 10;
        for (int index = 0; index < 3; index++) {
            for (int publisher = 0; publisher < 2; publisher++) {
                int seq = sends.seq(publisher, index);
                sends.sent(seq, 1_000L * seq);
                sends.published(seq, id++);
            }
        }
        return sends;
    }

    @Test
    void interleavedPublishersInIdOrderAreClean() {
        Sends sends = sends();
        DeliveryLog log = new DeliveryLog(TYPE, sends);
        for (int index = 0; index < 3; index++) {
            for (int publisher = 0; publisher < 2; publisher++) {
                int seq = sends.seq(publisher, index);
                log.received(sends.publishedId(seq), TYPE, seq + " padding", 1_000L * seq + 500);
            }
        }
        DeliveryLog.Outcome outcome = log.outcome(0);
        assertTrue(outcome.clean(), outcome.problems());
        assertEquals(6, outcome.delivered());
        assertEquals(6, outcome.latencyNanos().length);
        assertEquals(500, outcome.latencyNanos()[0]);
    }

    @Test
    void countsLostDuplicatedReorderedAndWrongIds() {
        Sends sends = sends();
        DeliveryLog log = new DeliveryLog(TYPE, sends);
        log.received(12, TYPE, "1", 1);
        log.received(10, TYPE, "0", 2);       // publisher 0's first event after its second: out of order
        log.received(10, TYPE, "0", 3);       // a second receipt: duplicated
        log.received(99, TYPE, "3", 4);       // publisher 1's first event under an id publish did not answer
        DeliveryLog.Outcome outcome = log.outcome(0);
        assertEquals(6, outcome.events());
        assertEquals(3, outcome.delivered());
        assertEquals(3, outcome.lost());
        assertEquals(1, outcome.duplicated());
        assertEquals(1, outcome.outOfOrder());
        assertEquals(1, outcome.wrongId());
    }

    @Test
    void peersWithoutIdsAreCheckedPerPublisher() {
        Sends sends = new Sends(2, 2);
        DeliveryLog log = new DeliveryLog(TYPE, sends);
        // Publishers interleave freely; only one publisher's own order counts.
        log.received(Sends.NO_ID, TYPE, "2", 1);
        log.received(Sends.NO_ID, TYPE, "0", 2);
        log.received(Sends.NO_ID, TYPE, "3", 3);
        log.received(Sends.NO_ID, TYPE, "1", 4);
        assertTrue(log.outcome(0).clean(), log.outcome(0).problems());

        DeliveryLog reordered = new DeliveryLog(TYPE, sends);
        reordered.received(Sends.NO_ID, TYPE, "1", 1);
        reordered.received(Sends.NO_ID, TYPE, "0", 2);
        assertEquals(1, reordered.outcome(0).outOfOrder());
    }

    @Test
    void warmUpEventsAreNotMeasured() {
        Sends sends = new Sends(1, 4);
        DeliveryLog log = new DeliveryLog(TYPE, sends);
        log.received(Sends.NO_ID, TYPE, "0", 1);
        log.received(Sends.NO_ID, TYPE, "1", 1);
        DeliveryLog.Outcome outcome = log.outcome(2);
        assertEquals(2, outcome.events());
        assertEquals(2, outcome.lost());
    }

    @Test
    void anEventTheLoopDidNotPublishFailsTheSubscriber() {
        DeliveryLog log = new DeliveryLog(TYPE, new Sends(1, 2));
        assertThrows(BenchException.class, () -> log.received(1, TYPE, "7", 1));
        assertThrows(BenchException.class, () -> log.received(1, "other", "0", 1));
        assertThrows(BenchException.class, () -> log.received(1, TYPE, "not a number", 1));
    }
}

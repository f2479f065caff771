package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import eu.arrowhead.eventhandler.topic.Hub;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The feed reads less only once its subscribers have wanted one type (or none) for {@link ReadNarrowing#SETTLED},
 * never while they want two (one filter subject per consumer on nats-server 2.9).
 */
class ReadNarrowingTest {
    private static final long SETTLED = ReadNarrowing.SETTLED.toNanos();
    private final Hub hub = new Hub(10, 100, 1 << 20, 1 << 22, new StreamFedLog());
    private final ReadNarrowing narrowing = new ReadNarrowing(hub);

    @Test
    void oneTypeIsReadAloneOnceItHasBeenTheOnlyOneForAWhile() {
        hub.subscribe(Set.of("a"), new RecordingSubscriber(), OptionalLong.empty());
        assertFalse(narrowing.narrowIfSettled(0));
        assertFalse(narrowing.narrowIfSettled(SETTLED / 2));
        assertTrue(narrowing.narrowIfSettled(SETTLED));
        assertEquals(Set.of("a"), hub.readScope().topicKeys());
        assertFalse(narrowing.narrowIfSettled(2 * SETTLED), "already read alone");
    }

    @Test
    void twoTypesAreReadAsEveryType() {
        hub.subscribe(Set.of("a", "b"), new RecordingSubscriber(), OptionalLong.empty());
        assertFalse(narrowing.narrowIfSettled(0));
        assertFalse(narrowing.narrowIfSettled(10 * SETTLED));
        assertTrue(hub.readScope().readsEveryTopic());
    }

    @Test
    void aChangeOfWhatIsWantedStartsTheWaitAgain() {
        RecordingSubscriber onA = new RecordingSubscriber();
        hub.subscribe(Set.of("a"), onA, OptionalLong.empty());
        assertFalse(narrowing.narrowIfSettled(0));
        hub.unsubscribe(Set.of("a"), onA);
        hub.subscribe(Set.of("b"), new RecordingSubscriber(), OptionalLong.empty());
        assertFalse(narrowing.narrowIfSettled(SETTLED), "b wanted since just now");
        assertTrue(narrowing.narrowIfSettled(2 * SETTLED));
        assertEquals(Set.of("b"), hub.readScope().topicKeys());
    }

    /** Without subscribers the node keeps reading what it read: the next one most likely wants the same type. */
    @Test
    void noSubscriberLeavesTheScopeAsItIs() {
        RecordingSubscriber onA = new RecordingSubscriber();
        hub.subscribe(Set.of("a"), onA, OptionalLong.empty());
        assertFalse(narrowing.narrowIfSettled(0));
        assertTrue(narrowing.narrowIfSettled(SETTLED));
        hub.unsubscribe(Set.of("a"), onA);
        assertFalse(narrowing.narrowIfSettled(2 * SETTLED));
        assertFalse(narrowing.narrowIfSettled(10 * SETTLED));
        assertEquals(Set.of("a"), hub.readScope().topicKeys());
    }
}

package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.testing.LocalHub;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** All replay windows together stay within replay.total-max-bytes, and a flood takes from its own window. */
class WindowBudgetTest {
    private static final long BUDGET = 1 << 20;
    private static final Subscriber NOBODY = new Subscriber() {
        @Override
        public SubscriberFilter filter() {
            return SubscriberFilter.NONE;
        }

        @Override
        public void offer(PublishedEvent event, Publication publication) {
        }
    };

    private final LocalHub local = new LocalHub(10_000, 1_000_000, Long.MAX_VALUE, BUDGET, EventJournal.NONE);
    private final Hub hub = local.hub();

    @Test
    void aFloodOnOneTopicIsCutFromItsOwnWindowAndQuietTopicsKeepTheirs() {
        for (int i = 0; i < 100; i++) {
            publish("quiet-" + i, 1_000);
        }
        long lastQuiet = hub.lastId();
        for (int i = 0; i < 5_000; i++) {
            publish("flood", 1_000);
        }
        assertTrue(hub.windowUse().heapBytes() <= BUDGET, hub.windowUse().toString());
        assertTrue(hub.windowUse().trims() > 0);
        // Every quiet topic still replays its one event; the flood's window starts well after its first.
        for (int i = 0; i < 100; i++) {
            Replay replay = resume("quiet-" + i, 0);
            assertNull(replay.gap(), "quiet-" + i);
            assertEquals(1, replay.events().size());
        }
        Replay flood = resume("flood", lastQuiet);
        assertNotNull(flood.gap());
        assertEquals(lastQuiet, flood.gap().requestedAfterId());
        assertTrue(flood.gap().resumedAfterId() > lastQuiet + 100, flood.gap().toString());
        assertEquals(hub.lastId() - flood.gap().resumedAfterId(), flood.events().size(),
                "the window holds every event after where it was cut");
    }

    @Test
    void manyTopicsPastTheBudgetAreCutToOneLevelLargestFirst() {
        for (int round = 0; round < 5; round++) {
            for (int topic = 0; topic < 100; topic++) {
                publish("topic-" + topic, topic < 50 ? 100 : 10_000);
            }
        }
        assertTrue(hub.windowUse().heapBytes() <= BUDGET);
        // The small windows (5 events of about 200 bytes) are under the level the large ones were cut to.
        for (int topic = 0; topic < 50; topic++) {
            Replay replay = resume("topic-" + topic, 0);
            assertNull(replay.gap());
            assertEquals(5, replay.events().size());
        }
        for (int topic = 50; topic < 100; topic++) {
            Replay large = resume("topic-" + topic, 0);
            assertNotNull(large.gap(), "a large window was cut");
            assertTrue(large.events().size() >= 1 && large.events().size() < 5, large.events().size() + " kept");
        }
    }

    @Test
    void removingAnIdleTopicGivesItsWindowBack() {
        publish("soon-idle", 10_000);
        assertTrue(hub.windowUse().heapBytes() > 10_000);
        assertEquals(1, hub.removeIdleTopics(Duration.ofNanos(-1)));
        assertEquals(0, hub.windowUse().heapBytes());
    }

    @Test
    void theLevelFitsTheTargetWithTheLargestCutFirst() {
        assertEquals(300, WindowBudget.level(new long[] {1_000, 300, 100}, 700));
        assertEquals(50, WindowBudget.level(new long[] {1_000, 300, 100}, 150));
        assertTrue(WindowBudget.level(new long[] {1_000, 300, 100}, 5_000) >= 1_000, "nothing to cut");
    }

    private void publish(String eventType, int payloadBytes) {
        byte[] json = EventEncoding.withIdZero(eventType, "x".repeat(payloadBytes), null, null, null);
        local.publish(List.of(new IncomingEvent(eventType, eventType, null, Map.of(), 0, json)), Publication.NONE);
    }

    private Replay resume(String topic, long afterId) {
        Replay replay = hub.subscribe(Set.of(topic), NOBODY, OptionalLong.of(afterId));
        hub.unsubscribe(Set.of(topic), NOBODY);
        return replay;
    }
}

package eu.arrowhead.eventhandler.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The parts of the heap: each derived from its share, and all together leaving the server its own. */
class HeapBudgetTest {
    private static final HeapBudget HEAP = HeapBudget.ofThisJvm();

    @Test
    void byDefaultEachPartTakesItsShare() {
        EventHandlerConfig config = ConfigLoader.withOverrides(Map.of());
        assertEquals(HEAP.replayWindows(), config.replayTotalBytes());
        assertEquals(HEAP.push(), config.push().totalMaxBytes());
        assertEquals(HEAP.storeBuffer(), config.storeBufferBytes());
        assertEquals(HEAP.oldGenerationBytes() - (20 << 20) - HEAP.oldGenerationBytes() / 4, HEAP.allParts());
        assertEquals(HEAP.topics() / 576, config.maxTopics(), "topic.max-count from the topics' share");
        assertEquals(HEAP.incompleteHeads() / (12 * 1024 + 2 * 8192), config.maxIncompleteHeads(),
                "server.max-incomplete-heads from the incomplete heads' share, at the default header bound");
        assertEquals(HEAP.incompleteHeads() / (12 * 1024 + 2 * 2048), ConfigLoader.withOverrides(
                Map.of("server.max-header-bytes", "2048")).maxIncompleteHeads(), "smaller heads, more connections");
        assertEquals(HEAP.silentConnections() / 4608, config.maxSilentConnections(),
                "server.max-silent-connections from the silent connections' share");
    }

    @Test
    void thePartsAreWhatTheOldGenerationLeavesBesideTheServerAndTheCollector() {
        HeapBudget smallest = new HeapBudget(64 << 20, (64 << 20) / 3 * 2);
        assertEquals(12 << 20, smallest.allParts(), "42.7 MiB less 20 MiB and a quarter");
        assertEquals(smallest.allParts() / 19 * 7, smallest.subscribers());
        assertTrue(HEAP.oldGenerationBytes() <= HEAP.maxHeapBytes() / 3 * 2, "the old generation at most 2/3");
        assertEquals(4 << 20, new HeapBudget(64 << 20, 24 << 20).allParts(), "a sixteenth below the smallest heap");
    }

    @Test
    void moreIncompleteHeadsThanTheirShareHoldsStopTheStart() {
        String tooMany = Long.toString(HEAP.incompleteHeads() / (12 * 1024 + 2 * 8192) + 1);
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("server.max-incomplete-heads", tooMany)));
        assertTrue(e.getMessage().contains("'server.max-incomplete-heads' (" + tooMany + ") cannot hold within the"
                + " heap"), e.getMessage());
    }

    @Test
    void moreTopicsThanTheirShareHoldsStopTheStart() {
        String tooMany = Long.toString(HEAP.topics() / 576 + 1);
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("topic.max-count", tooMany)));
        assertTrue(e.getMessage().contains("'topic.max-count' (" + tooMany + ") cannot hold within the heap"),
                e.getMessage());
    }

    @Test
    void aPartMayTakeMoreThanItsShareOnlyWhereAnotherLeavesItRoom() {
        String twoShares = Long.toString(2 * HEAP.replayWindows());
        assertEquals(2 * HEAP.replayWindows(), ConfigLoader.withOverrides(Map.of("replay.total-max-bytes", twoShares,
                "store.mode", "off")).replayTotalBytes(), "without a store, its buffer's and cache's shares are free");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.withOverrides(
                Map.of("replay.total-max-bytes", twoShares)));
        assertTrue(e.getMessage().contains("the heap cannot hold what the settings allow"), e.getMessage());
        assertTrue(e.getMessage().contains("replay.total-max-bytes " + (2 * HEAP.replayWindows() >> 10) + " KiB"),
                e.getMessage());
    }
}

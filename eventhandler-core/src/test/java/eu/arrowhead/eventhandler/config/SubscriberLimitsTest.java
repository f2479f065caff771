package eu.arrowhead.eventhandler.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The subscribers' limits hold within the heap: derived from it, or refused at start when they cannot. */
class SubscriberLimitsTest {
    private static final long MIB = 1 << 20;

    @Test
    void derivedFromTheHeapTheyTakeAtMostTheirShareOfIt() {
        for (long heap : new long[] {64 * MIB, 256 * MIB, 4096 * MIB}) {
            SubscriberLimits limits = limits(heap, Map.of());
            assertEquals(heap / 16, limits.totalQueueMaxBytes());
            assertEquals(Math.min(16 * MIB, heap / 64), limits.queueMaxBytes());
            assertEquals(heap * 5 / 32, limits.streamsHeapBytes());
            assertEquals(limits.streamsHeapBytes() / SubscriberLimits.MIN_STREAM_BYTES, limits.maxCount());
            assertTrue(limits.maxCount() * SubscriberLimits.MIN_STREAM_BYTES + limits.totalQueueMaxBytes()
                    <= heap * 7 / 32);
        }
        assertEquals(917, limits(64 * MIB, Map.of()).maxCount());
        assertEquals(3_668, limits(256 * MIB, Map.of()).maxCount());
    }

    @Test
    void aSubscriberLimitTheHeapCannotHoldStopsTheStart() {
        assertEquals(800, limits(64 * MIB, Map.of("subscriber.max-count", "800")).maxCount());
        ConfigException e = assertThrows(ConfigException.class,
                () -> limits(64 * MIB, Map.of("subscriber.max-count", "20000")));
        assertTrue(e.getMessage().contains("'subscriber.max-count' (20000) cannot hold within the heap"), e.getMessage());
        assertTrue(e.getMessage().contains("holds 917"), e.getMessage());
    }

    @Test
    void queueBoundsMustFitEachOtherAndTheHeap() {
        SubscriberLimits set = limits(256 * MIB, Map.of("subscriber.queue-max-bytes", "1048576",
                "subscriber.total-queue-max-bytes", "8388608"));
        assertEquals(1 * MIB, set.queueMaxBytes());
        assertEquals(8 * MIB, set.totalQueueMaxBytes());
        assertEquals(56 * MIB - 8 * MIB, set.streamsHeapBytes());
        ConfigException tooLarge = assertThrows(ConfigException.class,
                () -> limits(64 * MIB, Map.of("subscriber.queue-max-bytes", Long.toString(16 * MIB))));
        assertTrue(tooLarge.getMessage().contains("'subscriber.queue-max-bytes'"), tooLarge.getMessage());
        ConfigException noRoom = assertThrows(ConfigException.class,
                () -> limits(64 * MIB, Map.of("subscriber.total-queue-max-bytes", Long.toString(24 * MIB))));
        assertTrue(noRoom.getMessage().contains("'subscriber.total-queue-max-bytes'"), noRoom.getMessage());
    }

    @Test
    void theRetiredEventCountIsRefusedNamingItsReplacement() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("subscriber.queue-capacity", "1024")));
        assertTrue(e.getMessage().contains("'subscriber.queue-capacity'"), e.getMessage());
        assertTrue(e.getMessage().contains("subscriber.queue-max-bytes"), e.getMessage());
        ConfigException fromEnvironment = assertThrows(ConfigException.class,
                () -> ConfigLoader.load(new String[0], Map.of("EH_SUBSCRIBER_QUEUE_CAPACITY", "1024")));
        assertTrue(fromEnvironment.getMessage().contains("subscriber.queue-max-bytes"), fromEnvironment.getMessage());
    }

    private static SubscriberLimits limits(long heap, Map<String, String> overrides) {
        Map<String, String> values = ConfigLoader.defaults();
        values.putAll(overrides);
        return SubscriberLimits.from(new ConfigValues(values), new HeapBudget(heap));
    }
}

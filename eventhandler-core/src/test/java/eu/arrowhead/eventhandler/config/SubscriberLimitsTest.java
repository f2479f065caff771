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
        for (long mib : new long[] {64, 256, 4096}) {
            HeapBudget heap = serialHeap(mib);
            SubscriberLimits limits = limits(mib, Map.of());
            assertEquals(heap.subscriberQueues(), limits.totalQueueMaxBytes());
            assertEquals(Math.min(16 * MIB, heap.subscriberQueues() / 4), limits.queueMaxBytes());
            assertEquals(heap.subscribers() - heap.subscriberQueues(), limits.streamsHeapBytes());
            assertEquals(limits.streamsHeapBytes() / SubscriberLimits.MIN_STREAM_BYTES, limits.maxCount());
            assertTrue(limits.maxCount() * SubscriberLimits.MIN_STREAM_BYTES + limits.totalQueueMaxBytes()
                    <= heap.allParts() * 7 / 19);
        }
        assertEquals(289, limits(64, Map.of()).maxCount());
        assertEquals(2_606, limits(256, Map.of()).maxCount());
    }

    @Test
    void aSubscriberLimitTheHeapCannotHoldStopsTheStart() {
        assertEquals(250, limits(64, Map.of("subscriber.max-count", "250")).maxCount());
        ConfigException e = assertThrows(ConfigException.class,
                () -> limits(64, Map.of("subscriber.max-count", "20000")));
        assertTrue(e.getMessage().contains("'subscriber.max-count' (20000) cannot hold within the heap"), e.getMessage());
        assertTrue(e.getMessage().contains("holds 289"), e.getMessage());
    }

    @Test
    void queueBoundsMustFitEachOtherAndTheHeap() {
        SubscriberLimits set = limits(256, Map.of("subscriber.queue-max-bytes", "1048576",
                "subscriber.total-queue-max-bytes", "8388608"));
        assertEquals(1 * MIB, set.queueMaxBytes());
        assertEquals(8 * MIB, set.totalQueueMaxBytes());
        assertEquals(serialHeap(256).subscribers() - 8 * MIB, set.streamsHeapBytes());
        ConfigException tooLarge = assertThrows(ConfigException.class,
                () -> limits(64, Map.of("subscriber.queue-max-bytes", Long.toString(16 * MIB))));
        assertTrue(tooLarge.getMessage().contains("'subscriber.queue-max-bytes'"), tooLarge.getMessage());
        ConfigException noRoom = assertThrows(ConfigException.class,
                () -> limits(64, Map.of("subscriber.total-queue-max-bytes", Long.toString(6 * MIB))));
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

    /** A heap of {@code mib} with the serial collector's old generation, 2/3 of it. */
    private static HeapBudget serialHeap(long mib) {
        return new HeapBudget(mib * MIB, mib * MIB / 3 * 2);
    }

    private static SubscriberLimits limits(long heapMib, Map<String, String> overrides) {
        Map<String, String> values = ConfigLoader.defaults();
        values.putAll(overrides);
        return SubscriberLimits.from(new ConfigValues(values), serialHeap(heapMib));
    }
}

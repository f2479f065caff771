package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.HeapBudget;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The write buffer's bounds hold within the heap and take the largest publish, or the start stops. */
class StoreBufferConfigTest {

    @Test
    void byDefaultTheBufferTakesItsShareOfTheHeap() {
        assertEquals(HeapBudget.ofThisJvm().storeBuffer(), ConfigLoader.withOverrides(Map.of()).storeBufferBytes());
        assertEquals(12_345_678, ConfigLoader.withOverrides(Map.of("store.buffer-bytes", "12345678"))
                .storeBufferBytes());
    }

    @Test
    void aBufferTheHeapCannotHoldStopsTheStart() {
        ConfigException refused = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("store.buffer-bytes", Long.toString(HeapBudget.ofThisJvm().allParts() + 1))));
        assertTrue(refused.getMessage().contains("store.buffer-bytes"), refused.getMessage());
        assertTrue(refused.getMessage().contains("heap"), refused.getMessage());
    }

    @Test
    void aBufferSmallerThanTheLargestPublishStopsTheStart() {
        ConfigException events = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("store.buffer-events", "999")));
        assertTrue(events.getMessage().contains("publish.max-batch-events"), events.getMessage());
        ConfigException bytes = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("store.buffer-bytes", "1000")));
        assertTrue(bytes.getMessage().contains("publish.max-request-bytes"), bytes.getMessage());
        ConfigException withoutStore = assertThrows(ConfigException.class,
                () -> ConfigLoader.withOverrides(Map.of("store.buffer-events", "999", "store.mode", "off")));
        assertTrue(withoutStore.getMessage().contains("cannot take effect"), "without a store there is no buffer to"
                + " size: " + withoutStore.getMessage());
    }
}

package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.List;
import org.junit.jupiter.api.Test;

class DamagedRangesTest {

    @Test
    void aDamagedRangeIsSteppedAroundAndToldAsMissing() {
        MissingRanges missing = new MissingRanges(0, List.of());
        DamagedRanges damaged = new DamagedRanges(missing);
        damaged.found(new MissingRanges.Range(101, 200), "a read");
        assertFalse(damaged.contains(100));
        assertTrue(damaged.contains(101));
        assertTrue(damaged.contains(200));
        assertFalse(damaged.contains(201));
        assertEquals(200, damaged.lastOf(150));
        assertEquals(101, damaged.nextAfter(50));
        assertEquals(Long.MAX_VALUE, damaged.nextAfter(101));
        assertEquals(List.of(new ReplayGap(100, 200)), missing.within(0, 1000));
        assertEquals(List.of("101-200"), damaged.describe());
    }

    @Test
    void rangesFoundAPartPerReadMergeAndARangeKnownAddsNothing() {
        MissingRanges missing = new MissingRanges(0, List.of());
        DamagedRanges damaged = new DamagedRanges(missing);
        damaged.found(new MissingRanges.Range(101, 200), "a read");
        damaged.found(new MissingRanges.Range(201, 300), "a read");
        damaged.found(new MissingRanges.Range(150, 250), "a read");
        damaged.found(new MissingRanges.Range(501, 600), "the start");
        assertEquals(List.of("101-300", "501-600"), damaged.describe());
        assertEquals(List.of(new ReplayGap(100, 300), new ReplayGap(500, 600)), missing.within(0, 1000));
        assertEquals(501, damaged.nextAfter(300));
    }
}

package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.List;
import org.junit.jupiter.api.Test;

class MissingRangesTest {

    @Test
    void rangesThatTouchMergeIntoOneHole() {
        MissingRanges missing = new MissingRanges(0, List.of());
        missing.add(11, 20);
        missing.add(31, 40);
        missing.add(21, 25);
        missing.add(26, 30);
        assertEquals(List.of(new ReplayGap(10, 40)), missing.within(0, 100));
        assertEquals(1, missing.count());
        assertEquals(List.of(new MissingRanges.Range(11, 40)), missing.unsaved());
    }

    @Test
    void aResumeIsToldOfEachHoleItCrossesClippedToWhatItReads() {
        MissingRanges missing = new MissingRanges(0, List.of(new MissingRanges.Range(11, 20),
                new MissingRanges.Range(41, 50)));
        assertEquals(List.of(new ReplayGap(10, 20), new ReplayGap(40, 50)), missing.within(0, 100));
        assertEquals(List.of(new ReplayGap(15, 20), new ReplayGap(40, 45)), missing.within(15, 45));
        assertEquals(List.of(new ReplayGap(40, 50)), missing.within(20, 60));
        assertEquals(List.of(), missing.within(50, 100));
        assertEquals(List.of(), missing.within(0, 10));
    }

    @Test
    void retentionsWatermarkIsAHoleFromTheStartAndSwallowsTheRangesBelowIt() {
        MissingRanges missing = new MissingRanges(20, List.of(new MissingRanges.Range(21, 30),
                new MissingRanges.Range(41, 50)));
        assertEquals(List.of(new ReplayGap(0, 30), new ReplayGap(40, 50)), missing.within(0, 100));
        missing.deletedUpTo(45);
        assertEquals(List.of(new ReplayGap(5, 50)), missing.within(5, 100));
        missing.deletedUpTo(60);
        assertEquals(0, missing.count());
        assertEquals(List.of(new ReplayGap(0, 60)), missing.within(0, 100));
    }

    @Test
    void aRangeThatGrewWhileItWasBeingSavedStaysUnsaved() {
        MissingRanges missing = new MissingRanges(0, List.of());
        missing.add(11, 20);
        List<MissingRanges.Range> beingSaved = missing.unsaved();
        missing.add(21, 30);
        missing.saved(beingSaved);
        assertEquals(List.of(new MissingRanges.Range(11, 30)), missing.unsaved());
        missing.saved(missing.unsaved());
        assertEquals(List.of(), missing.unsaved());
    }
}

package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.List;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class AcknowledgedAuditTest {
    private static final long[] NONE = new long[0];

    private static long[] ids(long from, long to) {
        return LongStream.rangeClosed(from, to).toArray();
    }

    private static long[] concat(long[]... parts) {
        return Stream.of(parts).flatMapToLong(LongStream::of).toArray();
    }

    @Test
    void everyAcknowledgedEventInTheLogAndReplayedIsClean() {
        AcknowledgedAudit audit = AcknowledgedAudit.of(new long[] {3, 1, 2}, ids(1, 3), List.of(), ids(1, 3), true);
        assertEquals(new AcknowledgedAudit(3, 3, 0, 0, List.of(), 0, List.of(), 0), audit);
    }

    @Test
    void aHoleAfterACrashIsExcusedOnlyWhereAnnouncedAndOnlyForAnAsyncStore() {
        // 1..10 acknowledged; 6..8 lost in the crash; the restart skipped to 100 and the marker is 101.
        long[] acknowledged = concat(ids(1, 10), new long[] {101});
        long[] logged = concat(ids(1, 5), ids(9, 10), new long[] {101});
        long[] replayed = logged;
        // Two notices: 6..8 and 11..100 are not in the log.
        List<ReplayGap> gaps = List.of(new ReplayGap(5, 8), new ReplayGap(10, 100));

        AcknowledgedAudit async = AcknowledgedAudit.of(acknowledged, logged, gaps, replayed, true);
        assertEquals(11, async.acknowledged());
        assertEquals(8, async.inLog());
        assertEquals(3, async.announcedMissing());
        assertEquals(0, async.lost());

        AcknowledgedAudit sync = AcknowledgedAudit.of(acknowledged, logged, gaps, replayed, false);
        assertEquals(0, sync.announcedMissing());
        assertEquals(3, sync.lost());
        assertEquals(List.of(6L, 7L, 8L), sync.firstLost());
    }

    @Test
    void aGapsBoundsAreExclusiveBelowAndInclusiveAbove() {
        List<ReplayGap> gaps = List.of(new ReplayGap(5, 8));
        assertFalse(AcknowledgedAudit.announced(5, gaps));
        assertTrue(AcknowledgedAudit.announced(6, gaps));
        assertTrue(AcknowledgedAudit.announced(8, gaps));
        assertFalse(AcknowledgedAudit.announced(9, gaps));
        // A sequence that started again (no store) names no missing ids.
        assertFalse(AcknowledgedAudit.announced(3, List.of(new ReplayGap(5, 0))));
    }

    @Test
    void aMissingEventWithNoNoticeIsLostAndShownFirstLowest() {
        long[] acknowledged = ids(1, 30);
        long[] logged = ids(1, 5);
        AcknowledgedAudit audit = AcknowledgedAudit.of(acknowledged, logged, List.of(new ReplayGap(20, 23)),
                logged, true);
        assertEquals(3, audit.announcedMissing());
        assertEquals(22, audit.lost());
        assertEquals(List.of(6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L), audit.firstLost());
    }

    @Test
    void aReplayThatJumpsOverEventsTheLogHoldsIsCaught() {
        // The log holds 1..10; a gap notice claimed 2..8 missing and the replay went on at 9 (finding 8).
        long[] logged = ids(1, 10);
        AcknowledgedAudit audit = AcknowledgedAudit.of(logged, logged, List.of(new ReplayGap(1, 8)),
                new long[] {1, 9, 10}, true);
        assertEquals(0, audit.lost());
        assertEquals(7, audit.replaySkipped());
        assertEquals(List.of(2L, 3L, 4L, 5L, 6L, 7L, 8L), audit.firstSkipped());
    }

    @Test
    void aReplayThatRepeatsOrGoesBackIsCounted() {
        long[] logged = ids(1, 4);
        AcknowledgedAudit audit = AcknowledgedAudit.of(logged, logged, List.of(), new long[] {1, 2, 2, 4, 3}, true);
        assertEquals(2, audit.replayDisordered());
        assertEquals(0, audit.replaySkipped());
    }

    @Test
    void nothingAcknowledgedNothingToFind() {
        assertEquals(new AcknowledgedAudit(0, 0, 0, 0, List.of(), 0, List.of(), 0),
                AcknowledgedAudit.of(NONE, NONE, List.of(), NONE, true));
    }
}

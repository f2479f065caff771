package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;

/**
 * Every acknowledged event (a publish answered 200 with its id) held against what the event log holds and
 * what a subscriber resuming from id 0 was told. An acknowledged event must be in the log; with an async
 * store an event may be missing after a crash, but only inside a hole that a replay-gap notice announces
 * (its ids {@code requestedAfterId + 1} to {@code resumedAfterId}); with a sync store never. The replay
 * itself must deliver every event the log holds, in order, once.
 *
 * @param acknowledged     acknowledged events
 * @param inLog            of those, in the log
 * @param announcedMissing not in the log, inside an announced hole, where announcements excuse (async)
 * @param lost             not in the log, and not excused by an announcement
 * @param firstLost        the lowest ids of the lost, at most {@value #SHOWN}
 * @param replaySkipped    events the log holds that the replay did not deliver, up to the highest id it did
 * @param firstSkipped     the lowest ids of those, at most {@value #SHOWN}
 * @param replayDisordered deliveries of the replay that came after the same or a higher id
 */
record AcknowledgedAudit(long acknowledged, long inLog, long announcedMissing, long lost, List<Long> firstLost,
                         long replaySkipped, List<Long> firstSkipped, long replayDisordered) {
    static final int SHOWN = 10;

    /**
     * @param acknowledged         the acknowledged ids, in any order
     * @param logged               the ids the log holds, in any order
     * @param gaps                 the replay's gap notices
     * @param replayed             the ids the replay delivered, in the order it did
     * @param announcementsExcuse  whether an announced hole excuses a missing event: true for an async store
     */
    static AcknowledgedAudit of(long[] acknowledged, long[] logged, List<ReplayGap> gaps, long[] replayed,
                                boolean announcementsExcuse) {
        long[] log = sorted(logged);
        long inLog = 0;
        long announced = 0;
        LongStream.Builder lost = LongStream.builder();
        for (long id : sorted(acknowledged)) {
            if (Arrays.binarySearch(log, id) >= 0) {
                inLog++;
            } else if (announcementsExcuse && announced(id, gaps)) {
                announced++;
            } else {
                lost.add(id);
            }
        }
        long[] lostIds = lost.build().toArray();

        long[] delivered = sorted(replayed);
        long reached = delivered.length == 0 ? 0 : delivered[delivered.length - 1];
        long[] skipped = LongStream.of(log).filter(id -> id <= reached && Arrays.binarySearch(delivered, id) < 0)
                .toArray();
        long disordered = 0;
        for (int i = 1; i < replayed.length; i++) {
            disordered += replayed[i] <= replayed[i - 1] ? 1 : 0;
        }
        return new AcknowledgedAudit(acknowledged.length, inLog, announced, lostIds.length,
                first(lostIds), skipped.length, first(skipped), disordered);
    }

    /** Whether a notice names {@code id} as missing; a notice of a sequence that started again names none. */
    static boolean announced(long id, List<ReplayGap> gaps) {
        return gaps.stream().anyMatch(gap -> gap.requestedAfterId() < id && id <= gap.resumedAfterId());
    }

    private static List<Long> first(long[] ascending) {
        return LongStream.of(ascending).limit(SHOWN).boxed().toList();
    }

    private static long[] sorted(long[] ids) {
        long[] copy = ids.clone();
        Arrays.sort(copy);
        return copy;
    }
}

package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The CPU time per event and per delivery, and issue 13's targets judged on it. */
class CpuCostTest {
    private static final long MILLI = 1_000_000L;

    private static ResourceSnapshot cpu(long nanos) {
        return new ResourceSnapshot(null, null, null, null, nanos);
    }

    @Test
    void cpuTimeIsSharedOutOverEventsAndDeliveries() {
        ResourceSnapshot before = cpu(1_000 * MILLI);
        // 2.5 s of CPU over 20 000 events, each to 6 subscribers.
        ResourceSnapshot after = cpu(3_500 * MILLI);
        assertEquals(new BigDecimal("125.0"), after.cpuMicrosPerSince(before, 20_000));
        assertEquals(new BigDecimal("20.8"), after.cpuMicrosPerSince(before, 120_000));
        assertEquals(new BigDecimal("2500"), after.cpuMillisSince(before));
        assertNull(after.cpuMicrosPerSince(before, 0));
        assertNull(after.cpuMicrosPerSince(ResourceSnapshot.UNKNOWN, 20_000));
    }

    @Test
    void whatASnapshotsOwnProbingCostsIsLeftOut() {
        // Each snapshot asked for a full collection that took 300 ms of CPU: 1 s of it was the events'.
        ResourceSnapshot before = new ResourceSnapshot(null, null, null, null, 1_000 * MILLI, 1_300 * MILLI);
        ResourceSnapshot after = new ResourceSnapshot(null, null, null, null, 2_300 * MILLI, 2_600 * MILLI);
        assertEquals(new BigDecimal("1000"), after.cpuMillisSince(before));
        assertEquals(new BigDecimal("500.0"), after.cpuMicrosPerSince(before, 2_000));
    }

    private static List<Object> row(String scenario, String broker, String perEvent, String perDelivery) {
        return Arrays.asList(scenario, broker, perEvent == null ? null : new BigDecimal(perEvent),
                perDelivery == null ? null : new BigDecimal(perDelivery));
    }

    private static ResultTable figures(List<List<Object>> rows) {
        return new ResultTable("cpu", List.of(CpuScenario.ROW, CpuScenario.BROKER, CpuScenario.PER_EVENT,
                CpuScenario.PER_DELIVERY), rows);
    }

    private static ResultTable issue13Figures() {
        return figures(List.of(
                row("A", "ours", "447.0", "447.0"), row("A", "ours-store-off", "80.0", "80.0"),
                row("A", "mosquitto", "57.0", "57.0"), row("A", "nats", "133.0", "133.0"),
                row("B", "ours", "200.0", "33.3"), row("B", "mosquitto", "108.0", "18.0"),
                row("F", "ours", "8000.0", "40.0"), row("F", "mosquitto", "3800.0", "19.0")));
    }

    @Test
    void targetsAreJudgedOnFixedBoundsAndOnMosquittosFiguresOfTheSameRun() {
        ResultTable targets = CpuTargets.of(issue13Figures());
        assertEquals("cpu-targets", targets.name());
        assertEquals(4, targets.rows().size());
        // target, ours, limit, limit from, met?, by
        assertEquals(Arrays.asList("A, defaults: us per event <= 100", new BigDecimal("447.0"),
                BigDecimal.valueOf(100), "fixed", "missed", "+347%"), targets.rows().get(0));
        assertEquals(Arrays.asList("B, defaults: us per event <= 2 x Mosquitto's", new BigDecimal("200.0"),
                new BigDecimal("216.0"), "mosquitto 108.0 x 2", "met", "-7%"), targets.rows().get(1));
        List<Object> fanOut = targets.rows().get(2);
        assertEquals(new BigDecimal("40.0"), fanOut.get(1));
        assertEquals("missed", fanOut.get(4));
        assertEquals("+111%", fanOut.get(5));
        List<Object> storeOff = targets.rows().get(3);
        assertEquals(0, new BigDecimal("85.5").compareTo((BigDecimal) storeOff.get(2)));
        assertEquals("met", storeOff.get(4));
    }

    @Test
    void aTargetWithoutMosquittoOrWithoutOurFigureIsNotJudged() {
        ResultTable targets = CpuTargets.of(figures(List.of(row("A", "ours", "90.0", "90.0"),
                row("B", "ours", null, null), row("A", "nats", "133.0", "133.0"))));
        assertEquals("met", targets.rows().get(0).get(4));
        List<Object> b = targets.rows().get(1);
        assertNull(b.get(1));
        assertEquals("Mosquitto not measured", b.get(3));
        assertEquals(CpuTargets.NOT_JUDGED, b.get(4));
        assertNull(b.get(5));
        assertEquals(CpuTargets.NOT_JUDGED, targets.rows().get(3).get(4));
    }

    @Test
    void theMediansOfSeveralRunsAreJudgedAnewNotTakenFromOneRun() {
        // A's figure over three runs is 150, 90 and 95 µs: the first run missed the target, the median meets it.
        List<List<ResultTable>> runs = List.of("150.0", "90.0", "95.0").stream().map(a -> {
            ResultTable figures = figures(List.of(row("A", "ours", a, a)));
            return List.of(figures, CpuTargets.of(figures));
        }).toList();
        List<ResultTable> medians = Scenario.CPU.medians(runs);
        assertEquals(List.of("cpu-median-of-3", "cpu-median-of-3-targets"),
                medians.stream().map(ResultTable::name).toList());
        assertEquals(new BigDecimal("95.0"), medians.get(1).rows().get(0).get(1));
        assertEquals("met", medians.get(1).rows().get(0).get(4));
    }
}

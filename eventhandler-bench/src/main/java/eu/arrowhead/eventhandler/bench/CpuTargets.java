package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Issue 13's targets for the CPU an event costs the server, judged on the figures of one run of
 * {@link CpuScenario}: a fixed bound, or a multiple of Mosquitto's figure in the same run. A target whose
 * figures are missing (Mosquitto not running, a CPU time that could not be read) is neither met nor missed.
 */
final class CpuTargets {
    static final String MET = "met";
    static final String MISSED = "missed";
    static final String NOT_JUDGED = "n/a";
    private static final String MOSQUITTO = Peer.MOSQUITTO.label();
    private static final List<String> COLUMNS = List.of("target", "ours us", "limit us", "limit from", "met?",
            "by");
    private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);

    /**
     * One target: {@code broker}'s figure in {@code scenario}, per event or per delivery, at most
     * {@code fixedMicros}, or at most {@code timesMosquitto} times Mosquitto's same figure.
     */
    private record Target(String name, String scenario, String broker, boolean perDelivery, BigDecimal fixedMicros,
                          BigDecimal timesMosquitto) {
    }

    private static final List<Target> TARGETS = List.of(
            new Target("A, defaults: us per event <= 100", "A", CpuScenario.OURS, false, HUNDRED, null),
            new Target("B, defaults: us per event <= 2 x Mosquitto's", "B", CpuScenario.OURS, false, null,
                    BigDecimal.valueOf(2)),
            new Target("F, defaults: us per delivery <= Mosquitto's", "F", CpuScenario.OURS, true, null,
                    BigDecimal.ONE),
            new Target("A, store.mode=off: us per event <= 1.5 x Mosquitto's", "A", CpuScenario.OURS_STORE_OFF,
                    false, null, new BigDecimal("1.5")));

    private CpuTargets() {
    }

    /**
     * The targets, each judged on {@code cpu}, {@link CpuScenario}'s table (or the medians of several): its
     * rows are found by their {@code row} (A, B, F) and {@code broker} ({@code ours}, {@code mosquitto}).
     */
    static ResultTable of(ResultTable cpu) {
        List<List<Object>> rows = new ArrayList<>();
        for (Target target : TARGETS) {
            BigDecimal ours = figure(cpu, target.scenario(), target.broker(), target.perDelivery());
            BigDecimal limit;
            String from;
            if (target.fixedMicros() != null) {
                limit = target.fixedMicros();
                from = "fixed";
            } else {
                BigDecimal mosquitto = figure(cpu, target.scenario(), MOSQUITTO, target.perDelivery());
                limit = mosquitto == null ? null
                        : mosquitto.multiply(target.timesMosquitto()).setScale(1, RoundingMode.HALF_UP);
                from = mosquitto == null ? "Mosquitto not measured" : MOSQUITTO + " " + mosquitto.toPlainString()
                        + " x " + target.timesMosquitto().toPlainString();
            }
            rows.add(Arrays.asList(target.name(), ours, limit, from, verdict(ours, limit), by(ours, limit)));
        }
        return new ResultTable(cpu.name() + "-targets", COLUMNS, rows);
    }

    /** {@value #MET} when {@code ours} is at most {@code limit}, {@value #MISSED} above, else {@value #NOT_JUDGED}. */
    static String verdict(BigDecimal ours, BigDecimal limit) {
        if (ours == null || limit == null) {
            return NOT_JUDGED;
        }
        return ours.compareTo(limit) <= 0 ? MET : MISSED;
    }

    /** How far {@code ours} is above (+) or below (-) {@code limit}, in whole percent of it ("+347%"); or null. */
    static String by(BigDecimal ours, BigDecimal limit) {
        if (ours == null || limit == null || limit.signum() == 0) {
            return null;
        }
        BigDecimal percent = ours.subtract(limit).multiply(HUNDRED).divide(limit, 0, RoundingMode.HALF_UP);
        return (percent.signum() > 0 ? "+" : "") + percent.toPlainString() + "%";
    }

    /** The row's CPU µs per event or per delivery; null when the table has no such row or it is unknown. */
    private static BigDecimal figure(ResultTable cpu, String scenario, String broker, boolean perDelivery) {
        int rowColumn = cpu.columns().indexOf(CpuScenario.ROW);
        int brokerColumn = cpu.columns().indexOf(CpuScenario.BROKER);
        int figureColumn = cpu.columns().indexOf(perDelivery ? CpuScenario.PER_DELIVERY : CpuScenario.PER_EVENT);
        return cpu.rows().stream()
                .filter(row -> scenario.equals(row.get(rowColumn)) && broker.equals(row.get(brokerColumn)))
                .map(row -> row.get(figureColumn)).filter(BigDecimal.class::isInstance).map(BigDecimal.class::cast)
                .findFirst().orElse(null);
    }
}

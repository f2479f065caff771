package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;
import java.util.List;

/**
 * Mean, percentiles (nearest rank) and maximum of a set of latencies, in milliseconds to 3 decimals; all
 * null when there is no latency at all.
 */
record LatencyStats(BigDecimal mean, BigDecimal p50, BigDecimal p90, BigDecimal p99, BigDecimal p999,
                    BigDecimal max) {

    /** mean, p50, p90, p99, p99.9 and max: the order of the result tables' latency columns. */
    List<Object> cells() {
        return Arrays.asList(mean, p50, p90, p99, p999, max);
    }

    static LatencyStats of(long[] nanos) {
        if (nanos.length == 0) {
            return new LatencyStats(null, null, null, null, null, null);
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        double mean = Arrays.stream(sorted).average().orElseThrow();
        return new LatencyStats(millis(mean), percentile(sorted, 0.50), percentile(sorted, 0.90),
                percentile(sorted, 0.99), percentile(sorted, 0.999), millis(sorted[sorted.length - 1]));
    }

    private static BigDecimal percentile(long[] sorted, double fraction) {
        int rank = (int) Math.ceil(fraction * sorted.length);
        return millis(sorted[Math.max(0, rank - 1)]);
    }

    private static BigDecimal millis(double nanos) {
        return BigDecimal.valueOf(nanos / 1_000_000).setScale(3, RoundingMode.HALF_UP);
    }
}

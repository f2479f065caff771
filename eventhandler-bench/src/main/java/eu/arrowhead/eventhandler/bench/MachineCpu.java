package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The machine's CPU time so far, all cores, from the first line of {@code /proc/stat}: a row whose servers are
 * held to a quota can still be limited by the machine, when the peers, the NATS servers and the benchmark's own
 * clients take the rest of it.
 *
 * @param busyTicks  every state but idle and iowait
 * @param totalTicks every state
 */
record MachineCpu(long busyTicks, long totalTicks) {
    /** In the {@code cpu} line: user nice system idle iowait irq softirq steal (guest time is within user). */
    private static final int IDLE = 3;
    private static final int IOWAIT = 4;
    private static final int STATES = 8;

    static MachineCpu read() {
        Path stat = Path.of("/proc/stat");
        try {
            String[] fields = Files.readAllLines(stat).get(0).trim().split("\\s+");
            long busy = 0;
            long total = 0;
            for (int i = 0; i < STATES; i++) {
                long ticks = Long.parseLong(fields[i + 1]);
                total += ticks;
                busy += i == IDLE || i == IOWAIT ? 0 : ticks;
            }
            return new MachineCpu(busy, total);
        } catch (IOException | RuntimeException e) {
            throw new BenchException("cannot read " + stat + " (is this Linux?): " + e, e);
        }
    }

    /** The share of the time since {@code before} that the cores were busy, in percent. */
    BigDecimal busyPercentSince(MachineCpu before) {
        long total = totalTicks - before.totalTicks;
        return total <= 0 ? null : BigDecimal.valueOf(100.0 * (busyTicks - before.busyTicks) / total)
                .setScale(1, RoundingMode.HALF_UP);
    }
}

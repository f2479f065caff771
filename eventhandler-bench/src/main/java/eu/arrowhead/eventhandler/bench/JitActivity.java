package eu.arrowhead.eventhandler.bench;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How many methods server processes' JIT compilers have compiled so far, from each JVM's own counters
 * ({@code jcmd PID PerfCounter.print}, {@code sun.ci.totalCompiles}). A server whose count still climbs under
 * load is still compiling: under a CPU quota its compiler threads spend the quota its events need.
 */
final class JitActivity {
    private static final Pattern TOTAL_COMPILES = Pattern.compile("sun\\.ci\\.totalCompiles=(\\d+)");

    private JitActivity() {
    }

    /** Each process's compilations so far, in the order of {@code pids}. */
    static long[] totalCompiles(List<Long> pids) {
        long[] counts = new long[pids.size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = totalCompiles(pids.get(i));
        }
        return counts;
    }

    private static long totalCompiles(long pid) {
        String counters = Jcmd.run(Long.toString(pid), "PerfCounter.print");
        if (counters == null) {
            throw new BenchException("jcmd gave no performance counters for process " + pid);
        }
        Matcher count = TOTAL_COMPILES.matcher(counters);
        if (!count.find()) {
            throw new BenchException("jcmd gave no sun.ci.totalCompiles for process " + pid + ": "
                    + counters.lines().findFirst().orElse("(nothing)"));
        }
        return Long.parseLong(count.group(1));
    }
}

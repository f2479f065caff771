package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

    /** The compilations of all the processes together. */
    static long totalCompiles(List<Long> pids) {
        long sum = 0;
        for (long pid : pids) {
            sum += totalCompiles(pid);
        }
        return sum;
    }

    private static long totalCompiles(long pid) {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        try {
            Process process = new ProcessBuilder(jcmd, Long.toString(pid), "PerfCounter.print")
                    .redirectErrorStream(true).start();
            String counters = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new BenchException("jcmd did not answer for process " + pid + " within 30 s");
            }
            Matcher count = TOTAL_COMPILES.matcher(counters);
            if (!count.find()) {
                throw new BenchException("jcmd gave no sun.ci.totalCompiles for process " + pid + ": "
                        + counters.lines().findFirst().orElse("(nothing)"));
            }
            return Long.parseLong(count.group(1));
        } catch (IOException e) {
            throw new BenchException("cannot run jcmd for process " + pid + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while reading process " + pid + "'s compilations", e);
        }
    }
}

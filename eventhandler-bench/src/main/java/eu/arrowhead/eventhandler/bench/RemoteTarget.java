package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server already running, given by its address. Its threads, memory and CPU time are seen through
 * {@code /proc} only when its process id is given; then its heap too, after a full collection that
 * {@code jcmd PID GC.run} asks for, as the in-process target does, read with {@code jcmd PID GC.heap_info}.
 * The CPU time that collection and jcmd's attach cost the server is left out of the CPU time between two
 * snapshots.
 */
record RemoteTarget(URI baseUri, OptionalLong pid) implements Target {
    /** A generation's line in GC.heap_info: "def new generation   total 19648K, used 337K [...". */
    private static final Pattern HEAP_USED = Pattern.compile("total \\d+K, used (\\d+)K");

    @Override
    public ResourceSnapshot snapshot() {
        if (pid.isEmpty()) {
            return ResourceSnapshot.UNKNOWN;
        }
        String pidText = Long.toString(pid.getAsLong());
        // CPU time before and after the collection asked for, which no event made the server do.
        long cpuBeforeGc = ProcStatus.read(pidText).cpuNanos();
        Long heap = heapAfterGc(pidText);
        ProcStatus status = ProcStatus.read(pidText);
        return new ResourceSnapshot(status.threads(), null, status.rssBytes(), heap, cpuBeforeGc,
                status.cpuNanos());
    }

    /**
     * The heap in use after a full collection, or null where jcmd cannot tell it. Asked of the JVM itself
     * rather than of the server's {@code /metrics}, so that a server too busy or too short of heap to answer
     * HTTP is measured too.
     */
    private static Long heapAfterGc(String pid) {
        String heapInfo = Jcmd.run(pid, "GC.run") == null ? null : Jcmd.run(pid, "GC.heap_info");
        return heapInfo == null ? null : heapUsed(heapInfo);
    }

    /**
     * The heap in use that {@code jcmd PID GC.heap_info} reports: the sum of its generations' (or G1's
     * region set's) "used"; null when it names none.
     */
    static Long heapUsed(String heapInfo) {
        Matcher used = HEAP_USED.matcher(heapInfo);
        long kib = 0;
        boolean found = false;
        while (used.find()) {
            kib += Long.parseLong(used.group(1));
            found = true;
        }
        return found ? kib * 1024 : null;
    }

    @Override
    public void close() {
        // the server is not ours to stop
    }
}

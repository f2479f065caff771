package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Threads, memory and CPU time of a broker's process at one moment; a value that cannot be seen from here
 * is null.
 *
 * @param threads            live threads of the process
 * @param serverThreads      live threads whose names start with {@code eh-}: the server's own pools
 * @param rssBytes           resident set size
 * @param heapUsedBytes      Java heap in use after a full collection
 * @param cpuNanos           CPU time the broker has used so far: its process's, or in-process its own threads'
 * @param cpuNanosAfterProbe the same, read once this snapshot's own probing was done: a reading that makes
 *                           the process work (a full collection asked for through jcmd) costs it CPU that no
 *                           event did, and the CPU time between two snapshots leaves it out
 */
record ResourceSnapshot(Long threads, Long serverThreads, Long rssBytes, Long heapUsedBytes, Long cpuNanos,
                        Long cpuNanosAfterProbe) {
    static final ResourceSnapshot UNKNOWN = new ResourceSnapshot(null, null, null, null, null);
    private static final double MIB = 1024.0 * 1024.0;
    private static final double NANOS_PER_MICRO = 1e3;
    private static final double NANOS_PER_MILLI = 1e6;

    /** A snapshot whose reading cost the process nothing to speak of. */
    ResourceSnapshot(Long threads, Long serverThreads, Long rssBytes, Long heapUsedBytes, Long cpuNanos) {
        this(threads, serverThreads, rssBytes, heapUsedBytes, cpuNanos, cpuNanos);
    }

    /** The CPU milliseconds used from {@code before} to this one, or null. */
    BigDecimal cpuMillisSince(ResourceSnapshot before) {
        Long nanos = cpuNanosSince(before);
        return nanos == null ? null : BigDecimal.valueOf(nanos / NANOS_PER_MILLI).setScale(0, RoundingMode.HALF_UP);
    }

    /**
     * The CPU microseconds used from {@code before} to this one per each of {@code count} (events, deliveries),
     * to 1 decimal; null when the CPU time is unknown or there was nothing to share it out over.
     */
    BigDecimal cpuMicrosPerSince(ResourceSnapshot before, long count) {
        Long nanos = cpuNanosSince(before);
        return nanos == null || count <= 0 ? null
                : BigDecimal.valueOf(nanos / NANOS_PER_MICRO / count).setScale(1, RoundingMode.HALF_UP);
    }

    /** From the end of {@code before}'s probing to the start of this one's. */
    private Long cpuNanosSince(ResourceSnapshot before) {
        return cpuNanos == null || before.cpuNanosAfterProbe == null ? null : cpuNanos - before.cpuNanosAfterProbe;
    }

    /** The broker's own threads where they can be told apart, else all of its process's. */
    Long brokerThreads() {
        return serverThreads != null ? serverThreads : threads;
    }

    static BigDecimal mebibytes(Long bytes) {
        return bytes == null ? null : BigDecimal.valueOf(bytes / MIB).setScale(1, RoundingMode.HALF_UP);
    }
}

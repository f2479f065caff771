package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Threads, memory and CPU time of a broker's process at one moment; a value that cannot be seen from here
 * is null.
 *
 * @param threads       live threads of the process
 * @param serverThreads live threads whose names start with {@code eh-}: the server's own pools
 * @param rssBytes      resident set size
 * @param heapUsedBytes Java heap in use after a full collection
 * @param cpuNanos      CPU time the broker has used so far: its process's, or in-process its own threads'
 */
record ResourceSnapshot(Long threads, Long serverThreads, Long rssBytes, Long heapUsedBytes, Long cpuNanos) {
    static final ResourceSnapshot UNKNOWN = new ResourceSnapshot(null, null, null, null, null);
    private static final double MIB = 1024.0 * 1024.0;

    /** The CPU milliseconds used from {@code before} to this one, or null. */
    BigDecimal cpuMillisSince(ResourceSnapshot before) {
        return cpuNanos == null || before.cpuNanos == null ? null
                : BigDecimal.valueOf((cpuNanos - before.cpuNanos) / 1e6).setScale(0, RoundingMode.HALF_UP);
    }

    /** The broker's own threads where they can be told apart, else all of its process's. */
    Long brokerThreads() {
        return serverThreads != null ? serverThreads : threads;
    }

    static BigDecimal mebibytes(Long bytes) {
        return bytes == null ? null : BigDecimal.valueOf(bytes / MIB).setScale(1, RoundingMode.HALF_UP);
    }
}

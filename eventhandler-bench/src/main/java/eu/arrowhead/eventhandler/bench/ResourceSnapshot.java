package eu.arrowhead.eventhandler.bench;

/**
 * Threads and memory of the server's process at one moment; a value that cannot be seen from here is null.
 *
 * @param threads       live threads of the process
 * @param serverThreads live threads whose names start with {@code eh-}: the server's own pools
 * @param rssBytes      resident set size
 * @param heapUsedBytes Java heap in use after a full collection
 */
record ResourceSnapshot(Long threads, Long serverThreads, Long rssBytes, Long heapUsedBytes) {
}

package eu.arrowhead.eventhandler.bench;

/**
 * A progress line on stderr at most once a second. The caller reports at each step and the time is checked
 * there, so that no extra thread runs in the process whose threads the idle scenario counts.
 */
final class Progress {
    private static final long INTERVAL_NANOS = 1_000_000_000L;

    private final String label;
    private final long total;
    private long nextPrint = System.nanoTime() + INTERVAL_NANOS;

    Progress(String label, long total) {
        this.label = label;
        this.total = total;
    }

    void update(long done) {
        long now = System.nanoTime();
        if (now - nextPrint >= 0) {
            System.err.println(label + ": " + done + " / " + total);
            nextPrint = now + INTERVAL_NANOS;
        }
    }
}

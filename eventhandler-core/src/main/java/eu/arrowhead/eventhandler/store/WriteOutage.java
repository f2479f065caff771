package eu.arrowhead.eventhandler.store;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the event store's writes work, as the {@link JournalWriter} finds them, and the two lines that say when
 * that changes.
 *
 * <p>Two answers, on purpose. {@link #writable}: whether the last write (or probe) committed; a sync-mode publish
 * is taken only then, and it turns with every attempt. {@link #down}: what health, the status and the log say;
 * an outage begins with the first failed write and ends only once writes have worked for {@value #SETTLE_SECONDS}
 * s without a failure. A database that half works does exist: H2 on a full disk closes itself at the first write
 * that needs room, opens its file again on the next connection, and then commits a few more batches into space
 * its file already had before it fails again. Announced at every turn, that was a "cannot write" and a "writing
 * again after 0 s down" per publish, ten lines a second, and a health that flipped as often (issue 20). Now it is
 * one WARN line when the outage begins, one INFO line with the count of failed writes when it ends.
 *
 * <p>Thread-safe: the writer thread reports, any thread asks.
 */
final class WriteOutage {
    private static final Logger LOG = LoggerFactory.getLogger(WriteOutage.class);
    static final long SETTLE_SECONDS = 5;
    private static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(SETTLE_SECONDS);

    private volatile boolean writable = true;
    private volatile boolean down;
    private volatile String lastError;
    private volatile Instant downSince;
    /** Guarded by this. */
    private long lastFailureNanos;
    private long failures;

    /**
     * A write failed. The first failure of an outage is logged at WARN, the rest at DEBUG.
     *
     * @param buffered the events that wait to be written, for the line
     */
    synchronized void failed(String reason, int buffered) {
        writable = false;
        lastError = reason;
        lastFailureNanos = System.nanoTime();
        failures++;
        if (!down) {
            down = true;
            downSince = Instant.now();
            failures = 1;
            LOG.warn("the event store cannot write: {}; live delivery goes on, {} events wait to be written, retrying",
                    reason, buffered);
        } else {
            LOG.debug("the event store still cannot write: {}", reason);
        }
    }

    /** A write (or a probe's write) committed; ends the outage if none failed for {@value #SETTLE_SECONDS} s. */
    synchronized void succeeded() {
        writable = true;
        if (down && settleLeftNanos() == 0) {
            down = false;
            LOG.info("the event store is writing again after {} s down ({} writes failed meanwhile)",
                    Duration.between(downSince, Instant.now()).toSeconds(), failures);
            downSince = null;
        }
    }

    /** Whether the last write committed: publishes are taken, in sync mode too. */
    boolean writable() {
        return writable;
    }

    /** Whether an outage is going on, as health and the status report it. */
    boolean down() {
        return down;
    }

    /** Writes work again, but the outage is not over yet: a write that commits after {@link #settleLeftNanos} ends it. */
    boolean settling() {
        return writable && down;
    }

    /** How long from now writes must keep working before the outage is over; 0 once it may end. */
    synchronized long settleLeftNanos() {
        return Math.max(0, lastFailureNanos + SETTLE_NANOS - System.nanoTime());
    }

    /** Why the last write failed; {@code null} if none has. */
    String lastError() {
        return lastError;
    }

    /** When the outage began; {@code null} while there is none. */
    Instant downSince() {
        return downSince;
    }
}

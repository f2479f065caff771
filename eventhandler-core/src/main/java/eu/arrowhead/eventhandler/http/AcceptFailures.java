package eu.arrowhead.eventhandler.http;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.Context;
import org.glassfish.grizzly.IOEvent;
import org.glassfish.grizzly.IOEventLifeCycleListener;
import org.glassfish.grizzly.IOStrategy;
import org.glassfish.grizzly.Transport;
import org.glassfish.grizzly.threadpool.ThreadPoolConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says when the server cannot accept connections, which Grizzly keeps to itself: it hands a failed accept (most
 * often "Too many open files", the process at its descriptor limit) to the event's listener and, having none for
 * an accept, drops it. Clients then wait for answers that never come while the log says nothing.
 *
 * <p>This strategy is Grizzly's own for every event, and gives an accept a listener that counts the failures:
 * the first is a WARN line, then one line a minute at most with the count while they go on, and an INFO line
 * once an accept works again. Never a line per failure.
 *
 * <p>Left alone, the selector would also retry the accept as fast as it can while the backlog holds a
 * connection: some 12 000 times a second, a whole core spent on nothing while the server is already short of
 * descriptors. After a failure the accept is paused instead, 10 ms doubling up to 200 ms, so that a freed
 * descriptor is used within a fifth of a second and the outage costs a few wake-ups a second.
 */
public final class AcceptFailures implements IOStrategy {
    private static final Logger LOG = LoggerFactory.getLogger(AcceptFailures.class);
    private static final long FIRST_PAUSE_MILLIS = 10;
    private static final long LONGEST_PAUSE_MILLIS = 200;

    private final IOStrategy strategy;
    private final long summaryNanos;
    private final IOEventLifeCycleListener counter = new IOEventLifeCycleListener.Adapter() {
        @Override
        public void onError(Context context, Object description) {
            failed(description);
        }
    };
    /** Failures of the outage going on, 0 when accepts work; all on the one selector thread that accepts. */
    private long failures;
    private long failuresSinceLine;
    private long firstNanos;
    private long lastLineNanos;
    private boolean failedNow;
    private long pauseMillis = FIRST_PAUSE_MILLIS;

    /**
     * @param strategy the strategy that runs every event
     * @param summary  the shortest time between two lines about one outage
     */
    public AcceptFailures(IOStrategy strategy, Duration summary) {
        this.strategy = strategy;
        this.summaryNanos = summary.toNanos();
    }

    @Override
    public boolean executeIoEvent(Connection connection, IOEvent ioEvent) throws IOException {
        return executeIoEvent(connection, ioEvent, true);
    }

    @Override
    public boolean executeIoEvent(Connection connection, IOEvent ioEvent, boolean isIoEventEnabled)
            throws IOException {
        if (ioEvent != IOEvent.SERVER_ACCEPT) {
            return strategy.executeIoEvent(connection, ioEvent, isIoEventEnabled);
        }
        accept(connection);
        return true;
    }

    private synchronized void accept(Connection connection) {
        failedNow = false;
        connection.getTransport().fireIOEvent(IOEvent.SERVER_ACCEPT, connection, counter);
        if (failedNow) {
            pauseAccepting(connection);
        } else if (failures > 0) {
            LOG.info("accepting connections again, after {} failed accepts in {} s", failures,
                    (System.nanoTime() - firstNanos) / 1_000_000_000L);
            failures = 0;
            pauseMillis = FIRST_PAUSE_MILLIS;
        }
    }

    /**
     * Takes the server socket out of the selector's interest for a while. The JDK's shared delay thread puts it
     * back; Grizzly hands that to the selector thread, and does nothing once the server is closed.
     */
    private void pauseAccepting(Connection connection) {
        try {
            connection.disableIOEvent(IOEvent.SERVER_ACCEPT);
        } catch (IOException e) {
            LOG.debug("could not pause accepting", e);
            return;
        }
        CompletableFuture.delayedExecutor(pauseMillis, TimeUnit.MILLISECONDS, Runnable::run)
                .execute(() -> resumeAccepting(connection));
        pauseMillis = Math.min(LONGEST_PAUSE_MILLIS, pauseMillis * 2);
    }

    private static void resumeAccepting(Connection connection) {
        try {
            connection.enableIOEvent(IOEvent.SERVER_ACCEPT);
        } catch (IOException e) {
            LOG.debug("could not resume accepting", e);
        }
    }

    private void failed(Object description) {
        failedNow = true;
        long now = System.nanoTime();
        String cause = description instanceof Throwable t ? t.getMessage() : String.valueOf(description);
        if (failures++ == 0) {
            firstNanos = now;
            lastLineNanos = now;
            failuresSinceLine = 0;
            LOG.warn("cannot accept connections: {} (\"Too many open files\" is the process's descriptor limit,"
                    + " ulimit -n or LimitNOFILE); new clients wait until connections close; counted, and said again"
                    + " at most every {} s while it lasts",
                    cause, summaryNanos / 1_000_000_000L);
            return;
        }
        failuresSinceLine++;
        if (now - lastLineNanos >= summaryNanos) {
            LOG.warn("still cannot accept connections: {} ({} failed accepts in the last {} s, {} since {} s ago)",
                    cause, failuresSinceLine, (now - lastLineNanos) / 1_000_000_000L, failures,
                    (now - firstNanos) / 1_000_000_000L);
            lastLineNanos = now;
            failuresSinceLine = 0;
        }
    }

    @Override
    public Executor getThreadPoolFor(Connection connection, IOEvent ioEvent) {
        return strategy.getThreadPoolFor(connection, ioEvent);
    }

    @Override
    public ThreadPoolConfig createDefaultWorkerPoolConfig(Transport transport) {
        return strategy.createDefaultWorkerPoolConfig(transport);
    }
}

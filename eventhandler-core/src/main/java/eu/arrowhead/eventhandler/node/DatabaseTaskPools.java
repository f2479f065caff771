package eu.arrowhead.eventhandler.node;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread pools whose tasks may be inside the database: the workers ({@code mgmt/events}), the event store's
 * readers (replays) and its retention (deletes). None of their threads is ever interrupted, since an interrupt
 * inside a database's I/O can break it for every thread. At the stop they all take no more work at once, then
 * each is waited for against one deadline, the grace period plus a bound of its own, and left to end after it.
 */
public final class DatabaseTaskPools {
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseTaskPools.class);

    private final Duration bound;
    private final List<ExecutorService> pools = new CopyOnWriteArrayList<>();
    private long deadline;
    private boolean stopping;

    /** @param bound how long their running tasks get after the grace period */
    public DatabaseTaskPools(Duration bound) {
        this.bound = bound;
    }

    /** Adds a pool, to be stopped by {@link #stop}. */
    public <T extends ExecutorService> T add(T pool) {
        pools.add(pool);
        return pool;
    }

    /**
     * No pool starts anything more: queued tasks that have not started go, running ones go on. From the first call
     * on, running tasks have until the later of {@code graceDeadlineNanos} and now, plus the bound.
     */
    public synchronized void takeNoMore(long graceDeadlineNanos) {
        if (!stopping) {
            stopping = true;
            deadline = Math.max(graceDeadlineNanos, System.nanoTime()) + bound.toNanos();
        }
        for (ExecutorService pool : pools) {
            pool.shutdown();
            if (pool instanceof ThreadPoolExecutor executor) {
                executor.getQueue().clear();
            }
        }
    }

    /**
     * How one of the pools stops as a {@linkplain StartedParts part}: takes no more work, with the others (a
     * failed start has said nothing of it yet), then lets its running tasks end until the deadline.
     */
    public StartedParts.Stop stop(String what, ExecutorService pool) {
        return () -> {
            takeNoMore(System.nanoTime());
            if (!pool.awaitTermination(Math.max(0, deadline() - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                LOG.warn("the {} did not end within the stop's bound; left to end on their own", what);
            }
        };
    }

    private synchronized long deadline() {
        return deadline;
    }
}

package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Resolves a subscriber's host name at subscribe time at a bounded cost. The JDK's lookup cannot be timed out
 * nor interrupted, so it runs on a thread of its own (at most {@link #THREADS}, none while idle) and the
 * subscribe waits for it at most {@code timeout}; a request worker is never held longer than that, however
 * slow the name server is.
 */
final class NameLookup implements AutoCloseable {
    static final int THREADS = 2;
    private static final int QUEUE = 16;

    private final ThreadPoolExecutor threads;
    private final Duration timeout;

    NameLookup(Duration timeout) {
        this.timeout = timeout;
        this.threads = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE),
                NamedThreads.daemons("eh-push-lookup"));
        this.threads.allowCoreThreadTimeOut(true);
    }

    /**
     * The addresses of a name.
     *
     * @return empty when the name does not resolve, or not within the timeout: then only the checks on
     *         every connection apply ({@link GuardedDnsResolver})
     * @throws UnavailableException 503 when too many lookups are waiting already
     */
    List<InetAddress> resolve(String name) {
        CompletableFuture<InetAddress[]> lookup;
        try {
            lookup = CompletableFuture.supplyAsync(() -> {
                try {
                    return InetAddress.getAllByName(name);
                } catch (UnknownHostException e) {
                    return new InetAddress[0];
                }
            }, threads);
        } catch (RejectedExecutionException e) {
            throw new UnavailableException("too many subscribers' host names are being looked up; try again");
        }
        try {
            return List.of(lookup.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException | ExecutionException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("the Event Handler is shutting down");
        }
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}

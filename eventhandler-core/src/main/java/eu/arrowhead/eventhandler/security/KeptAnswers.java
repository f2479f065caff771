package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.diagnostics.LogThrottle;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Authorization system's answers as the event store keeps them, written on a thread of their own in the
 * order they change: requests, probes and rechecks never wait for the database, and a database that hangs
 * holds up only these writes.
 *
 * <p>A forget (an authorization update) that the database refuses is tried again before each later write and
 * at close: an answer the update revoked must not come back with the next start. Only if it still fails then
 * is it left, and said so.
 */
final class KeptAnswers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KeptAnswers.class);
    /** How long a stop waits for the writes still queued; the writer is never interrupted inside the database. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private final AuthorizationStore store;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            NamedThreads.daemons("eh-authorization-store"));
    private final LogThrottle failures = new LogThrottle(Duration.ofMinutes(1));
    /** A forget the database has not done yet; only the writer's thread reads and writes it. */
    private boolean forgetPending;

    KeptAnswers(AuthorizationStore store) {
        this.store = store;
    }

    /** Every answer kept, read on the caller's thread (at start). */
    List<AuthorizationStore.StoredAnswer> load() {
        return store.loadAnswers();
    }

    /** Keeps an answer, replacing the subscriber's last one. */
    void save(AuthorizationStore.StoredAnswer answer) {
        write(() -> {
            forgetIfPending();
            store.saveAnswer(answer);
        });
    }

    /** Forgets every answer. */
    void forgetAll() {
        write(() -> {
            forgetPending = true;
            forgetIfPending();
        });
    }

    private void forgetIfPending() {
        if (forgetPending) {
            store.deleteAnswers();
            forgetPending = false;
        }
    }

    private void write(Runnable work) {
        if (store == AuthorizationStore.NONE) {
            // Nothing to write (store.mode=off, cluster mode): no thread either.
            return;
        }
        try {
            writer.execute(() -> {
                try {
                    work.run();
                } catch (RuntimeException e) {
                    long held = failures.pass();
                    if (held >= 0) {
                        LOG.warn("the event store cannot keep the Authorization system's answers ({}; {} more such"
                                + " failures in the last minute); they hold in memory, and a forget is tried again"
                                + " with the next write", e.toString(), held);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // closed: the server is stopping
        }
    }

    /** Lets the queued writes end, and tries a forget still pending once more. */
    @Override
    public void close() {
        write(() -> {
            try {
                forgetIfPending();
            } catch (RuntimeException e) {
                LOG.warn("the event store still holds the Authorization system's answers from before an authorization"
                        + " update ({}); at the next start they are used until it answers", e.toString());
            }
        });
        writer.shutdown();
        try {
            if (!writer.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("the Authorization system's answers were not all written within {} s; left to end on their"
                        + " own", CLOSE_WAIT.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

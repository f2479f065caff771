package eu.arrowhead.eventhandler.cluster;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which push subscriptions are paused in cluster mode, kept in the dead letters' bucket where every node sees them:
 * {@code paused.<id>} holds why, and {@code row-start.<id>} the highest letter id when the subscription was last
 * resumed or redelivered (letters up to it no longer count toward a pause). Every node watches the pauses and stops
 * or starts its cursor's pulls, so that no node sends a paused subscription's events.
 *
 * <p>A change is known here from the watch, or at once from this node's own write; whichever comes second is
 * ignored unless its key's revision is newer, so that a stale change never undoes a newer one. The cursors are told
 * on the letters' thread, never on the watch's: a cursor's lock may be held through a call to NATS.
 */
final class SharedPauses {
    private static final Logger LOG = LoggerFactory.getLogger(SharedPauses.class);
    private static final String PAUSED = "paused.";
    private static final String ROW_START = "row-start.";

    private final KeyValue bucket;
    private final JetStreamManagement management;
    private final LongFunction<PushCursor> cursors;
    private final Executor thread;
    /**
     * Each subscription's pause as this node last saw it, resumed ones too (their revision outdates older changes);
     * guarded by this.
     */
    private final Map<Long, Pause> pauses = new HashMap<>();

    /** A pause key's state at a revision of the bucket: why, or {@code null} once deleted. */
    private record Pause(long revision, String why) {
    }

    /**
     * @param cursors this node's cursor of a subscription, or {@code null}
     * @param thread  the letters' thread, where the cursors are told
     */
    SharedPauses(KeyValue bucket, JetStreamManagement management, LongFunction<PushCursor> cursors, Executor thread) {
        this.bucket = bucket;
        this.management = management;
        this.cursors = cursors;
        this.thread = thread;
    }

    /**
     * Puts every node's pauses in effect here, those there are now (read before this returns) and every change from
     * now on; before the subscriptions are loaded, so that none starts pulling while paused.
     */
    void watch(Duration timeout) throws IOException {
        CountDownLatch read = new CountDownLatch(1);
        KeyValueWatcher watcher = new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry entry) {
                try {
                    long id = Long.parseLong(entry.getKey().substring(PAUSED.length()));
                    changed(id, entry.getRevision(), entry.getOperation() == KeyValueOperation.PUT
                            ? new String(entry.getValue(), StandardCharsets.UTF_8) : null);
                } catch (RuntimeException e) {
                    LOG.warn("a push subscription's pause in the cluster ({}) cannot be put in effect here: {}",
                            entry.getKey(), e.toString());
                }
            }

            @Override
            public void endOfData() {
                read.countDown();
            }
        };
        try {
            // The last value of each key, then every change: no change falls between a read and the watch.
            bucket.watch(PAUSED + ">", watcher);
            if (!read.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("the cluster's paused push subscriptions were not read within " + timeout);
            }
        } catch (JetStreamApiException | RuntimeException e) {
            throw new IOException("the cluster's paused push subscriptions cannot be read: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the cluster's paused push subscriptions", e);
        }
    }

    /** Why a subscription is paused, or {@code null}. */
    synchronized String reason(long subscriptionId) {
        Pause pause = pauses.get(subscriptionId);
        return pause == null ? null : pause.why();
    }

    /** How many subscriptions are paused. */
    synchronized int count() {
        return (int) pauses.values().stream().filter(pause -> pause.why() != null).count();
    }

    /** Pauses a subscription on every node (on this one at once). */
    void pause(long subscriptionId, String why) {
        long revision;
        try {
            revision = bucket.put(PAUSED + subscriptionId, why.getBytes(StandardCharsets.UTF_8));
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
        changed(subscriptionId, revision, why);
    }

    /**
     * Resumes a subscription on every node (on this one at once), and starts the count of letters in a row after
     * {@code lastLetterId}. Asks the bucket, not what this node has seen: a pause whose news has not reached this
     * node yet is resumed all the same.
     *
     * @return whether it was paused
     */
    boolean resume(long subscriptionId, long lastLetterId) {
        try {
            bucket.put(ROW_START + subscriptionId, Long.toString(lastLetterId).getBytes(StandardCharsets.US_ASCII));
            KeyValueEntry paused = bucket.get(PAUSED + subscriptionId);
            if (paused == null) {
                return false;
            }
            bucket.delete(PAUSED + subscriptionId);
            // The delete's revision is past the pause's: at least the next one.
            changed(subscriptionId, paused.getRevision() + 1, null);
            return true;
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
    }

    /** The letters of a subscription up to this id do not count toward its next pause. */
    long rowStart(long subscriptionId) {
        try {
            KeyValueEntry entry = bucket.get(ROW_START + subscriptionId);
            return entry == null || entry.getValue() == null ? 0
                    : Long.parseLong(new String(entry.getValue(), StandardCharsets.US_ASCII));
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
    }

    /** The subscriptions that have a pause or a row start in the bucket. */
    Set<Long> subscriptionIds() {
        try {
            Set<Long> ids = new TreeSet<>();
            for (String prefix : new String[] {PAUSED, ROW_START}) {
                for (String key : bucket.keys(prefix + ">")) {
                    ids.add(Long.parseLong(key.substring(prefix.length())));
                }
            }
            return ids;
        } catch (IOException | JetStreamApiException | NumberFormatException e) {
            throw failed(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the cluster's push pauses", e);
        }
    }

    /** The subscription is gone: its keys go, without a trace in the bucket. */
    void forget(long subscriptionId) {
        synchronized (this) {
            pauses.remove(subscriptionId);
        }
        try {
            for (String key : new String[] {PAUSED + subscriptionId, ROW_START + subscriptionId}) {
                SharedBucket.purge(management, bucket, key);
            }
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
    }

    /** A pause key changed at a revision: in effect here unless a newer revision is. */
    private synchronized void changed(long subscriptionId, long revision, String why) {
        Pause known = pauses.get(subscriptionId);
        if (known != null && known.revision() >= revision) {
            return;
        }
        pauses.put(subscriptionId, new Pause(revision, why));
        tell(subscriptionId);
    }

    /** Puts a subscription's pause as this node knows it, when told, in effect on its cursor here, if any. */
    void tell(long subscriptionId) {
        try {
            thread.execute(() -> {
                PushCursor cursor = cursors.apply(subscriptionId);
                if (cursor != null) {
                    cursor.paused(reason(subscriptionId));
                }
            });
        } catch (RejectedExecutionException e) {
            // The node stops.
        }
    }

    private static IllegalStateException failed(Exception e) {
        return new IllegalStateException("the cluster's push pauses cannot be read or written now: " + e.getMessage(),
                e);
    }
}

package eu.arrowhead.eventhandler.cluster;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.PurgeOptions;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatchOption;
import io.nats.client.api.KeyValueWatcher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which push subscriptions are paused in cluster mode, kept in the dead letters' bucket where every node sees them:
 * {@code paused.<id>} holds why, and {@code row-start.<id>} the highest letter id when the subscription was last
 * resumed or redelivered (letters up to it no longer count toward a pause). Every node watches the pauses and stops
 * or starts its cursor's pulls, so that no node sends a paused subscription's events.
 */
final class SharedPauses {
    private static final Logger LOG = LoggerFactory.getLogger(SharedPauses.class);
    private static final String PAUSED = "paused.";
    private static final String ROW_START = "row-start.";

    private final KeyValue bucket;
    private final JetStreamManagement management;
    private final LongFunction<PushCursor> cursors;
    /** Why each paused subscription is, as this node last saw. */
    private final Map<Long, String> reasons = new ConcurrentHashMap<>();

    /** @param cursors this node's cursor of a subscription, or {@code null} */
    SharedPauses(KeyValue bucket, JetStreamManagement management, LongFunction<PushCursor> cursors) {
        this.bucket = bucket;
        this.management = management;
        this.cursors = cursors;
    }

    /**
     * Puts every node's pauses in effect here from now on, and those there are now; before the subscriptions are
     * loaded, so that none starts pulling while paused.
     */
    void watch() throws IOException {
        KeyValueWatcher watcher = new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry entry) {
                try {
                    long id = Long.parseLong(entry.getKey().substring(PAUSED.length()));
                    changed(id, entry.getOperation() == KeyValueOperation.PUT
                            ? new String(entry.getValue(), StandardCharsets.UTF_8) : null);
                } catch (RuntimeException e) {
                    LOG.warn("a push subscription's pause in the cluster ({}) cannot be put in effect here: {}",
                            entry.getKey(), e.toString());
                }
            }

            @Override
            public void endOfData() {
                // only updates are watched
            }
        };
        try {
            bucket.watch(PAUSED + ">", watcher, KeyValueWatchOption.UPDATES_ONLY);
            for (String key : bucket.keys(PAUSED + ">")) {
                KeyValueEntry entry = bucket.get(key);
                if (entry != null && entry.getValue() != null) {
                    reasons.putIfAbsent(Long.parseLong(key.substring(PAUSED.length())),
                            new String(entry.getValue(), StandardCharsets.UTF_8));
                }
            }
        } catch (JetStreamApiException | RuntimeException e) {
            throw new IOException("the cluster's paused push subscriptions cannot be read: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the cluster's paused push subscriptions", e);
        }
    }

    /** Why a subscription is paused, or {@code null}. */
    String reason(long subscriptionId) {
        return reasons.get(subscriptionId);
    }

    /** How many subscriptions are paused. */
    int count() {
        return reasons.size();
    }

    /** Pauses a subscription on every node (on this one at once). */
    void pause(long subscriptionId, String why) {
        try {
            bucket.put(PAUSED + subscriptionId, why.getBytes(StandardCharsets.UTF_8));
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
        changed(subscriptionId, why);
    }

    /**
     * Resumes a subscription on every node, and starts the count of letters in a row after {@code lastLetterId}.
     *
     * @return whether it was paused
     */
    boolean resume(long subscriptionId, long lastLetterId) {
        boolean paused = reasons.containsKey(subscriptionId);
        try {
            bucket.put(ROW_START + subscriptionId, Long.toString(lastLetterId).getBytes(StandardCharsets.US_ASCII));
            if (paused) {
                bucket.delete(PAUSED + subscriptionId);
            }
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
        changed(subscriptionId, null);
        return paused;
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

    /** The subscription is gone: its keys go, without a trace in the bucket. */
    void forget(long subscriptionId) {
        reasons.remove(subscriptionId);
        try {
            for (String key : new String[] {PAUSED + subscriptionId, ROW_START + subscriptionId}) {
                management.purgeStream("KV_" + bucket.getBucketName(),
                        PurgeOptions.subject("$KV." + bucket.getBucketName() + "." + key));
            }
        } catch (IOException | JetStreamApiException e) {
            throw failed(e);
        }
    }

    private void changed(long subscriptionId, String why) {
        if (why == null) {
            reasons.remove(subscriptionId);
        } else {
            reasons.put(subscriptionId, why);
        }
        PushCursor cursor = cursors.apply(subscriptionId);
        if (cursor != null) {
            cursor.paused(why);
        }
    }

    private static IllegalStateException failed(Exception e) {
        return new IllegalStateException("the cluster's push pauses cannot be read or written now: " + e.getMessage(),
                e);
    }
}

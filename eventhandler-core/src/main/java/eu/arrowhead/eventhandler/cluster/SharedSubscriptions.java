package eu.arrowhead.eventhandler.cluster;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatchOption;
import io.nats.client.api.KeyValueWatcher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push subscriptions of every node, kept in a JetStream key-value bucket beside the stream
 * ({@code <cluster.stream>_SUBSCRIPTIONS}, as many replicas as the stream): one key per subscription, and a
 * counter that gives ids no node has given. Each node {@linkplain #watch watches} the bucket and puts the other
 * nodes' changes in effect, so that every node knows every subscription.
 */
final class SharedSubscriptions implements SubscriptionStore {
    private static final Logger LOG = LoggerFactory.getLogger(SharedSubscriptions.class);
    private static final String PREFIX = "sub.";
    private static final String NEXT_ID = "next-id";
    /** JetStream's error code for an update whose expected revision is not the key's. */
    private static final int WRONG_REVISION = 10071;
    private static final ObjectReader READER = JsonMapper.get().readerFor(StoredSubscription.class);
    private static final ObjectWriter WRITER = JsonMapper.get().writerFor(StoredSubscription.class);

    private final KeyValue bucket;

    private SharedSubscriptions(KeyValue bucket) {
        this.bucket = bucket;
    }

    /** Opens the bucket, creating it if it is missing. */
    static SharedSubscriptions open(Connection nats, String stream, int replicas, Duration timeout) throws IOException {
        return new SharedSubscriptions(SharedBucket.open(nats, stream + "_SUBSCRIPTIONS", replicas, timeout,
                "push subscriptions"));
    }

    @Override
    public List<StoredSubscription> loadSubscriptions() {
        try {
            List<StoredSubscription> all = new ArrayList<>();
            for (String key : bucket.keys()) {
                if (key.startsWith(PREFIX)) {
                    KeyValueEntry entry = bucket.get(key);
                    if (entry != null && entry.getValue() != null) {
                        all.add(READER.readValue(entry.getValue()));
                    }
                }
            }
            all.sort(Comparator.comparingLong(StoredSubscription::id));
            return all;
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("the cluster's push subscriptions cannot be read: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the cluster's push subscriptions", e);
        }
    }

    /** The ids of the subscriptions there are; blocking. */
    Set<Long> ids() {
        try {
            Set<Long> ids = new HashSet<>();
            for (String key : bucket.keys(PREFIX + ">")) {
                ids.add(Long.parseLong(key.substring(PREFIX.length())));
            }
            return ids;
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("the cluster's push subscriptions cannot be read: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the cluster's push subscriptions", e);
        }
    }

    @Override
    public void saveSubscription(StoredSubscription subscription) {
        try {
            bucket.put(PREFIX + subscription.id(), WRITER.writeValueAsBytes(subscription));
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("the push subscription cannot be saved in the cluster: " + e.getMessage(), e);
        }
    }

    @Override
    public void deleteSubscription(long id) {
        try {
            bucket.delete(PREFIX + id);
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("the push subscription cannot be deleted in the cluster: " + e.getMessage(),
                    e);
        }
    }

    /** The next id from the bucket's counter, raised by compare-and-set so that two nodes never get the same. */
    @Override
    public long nextSubscriptionId(long lastId) {
        try {
            while (true) {
                KeyValueEntry counter = bucket.get(NEXT_ID);
                long given = counter == null || counter.getValue() == null ? 0
                        : Long.parseLong(new String(counter.getValue(), StandardCharsets.US_ASCII));
                long next = Math.max(given, lastId) + 1;
                byte[] value = Long.toString(next).getBytes(StandardCharsets.US_ASCII);
                try {
                    if (counter == null) {
                        bucket.create(NEXT_ID, value);
                    } else {
                        bucket.update(NEXT_ID, value, counter.getRevision());
                    }
                    return next;
                } catch (JetStreamApiException e) {
                    if (e.getApiErrorCode() != WRONG_REVISION) {
                        throw e;
                    }
                    // Another node took an id meanwhile: read the counter again.
                }
            }
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("no push subscription id can be taken in the cluster: " + e.getMessage(), e);
        }
    }

    /** Tells {@code subscriptions} of every change to the bucket from now on, this node's own included. */
    void watch(PushSubscriptions subscriptions) throws IOException {
        KeyValueWatcher watcher = new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry entry) {
                try {
                    long id = Long.parseLong(entry.getKey().substring(PREFIX.length()));
                    if (entry.getOperation() == KeyValueOperation.PUT) {
                        subscriptions.storedElsewhere(READER.readValue(entry.getValue()));
                    } else {
                        subscriptions.deletedElsewhere(id);
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.warn("a push subscription change in the cluster ({}) cannot be put in effect here: {}",
                            entry.getKey(), e.toString());
                }
            }

            @Override
            public void endOfData() {
                // only updates are watched
            }
        };
        try {
            bucket.watch(PREFIX + ">", watcher, KeyValueWatchOption.UPDATES_ONLY);
        } catch (JetStreamApiException e) {
            throw new IOException("the cluster's push subscriptions cannot be watched: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while watching the cluster's push subscriptions", e);
        }
    }
}

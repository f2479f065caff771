package eu.arrowhead.eventhandler.cluster;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueManagement;
import io.nats.client.KeyValueOptions;
import io.nats.client.PurgeOptions;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.StorageType;
import java.io.IOException;
import java.time.Duration;

/**
 * A JetStream key-value bucket every node shares, beside the stream: opened (created if it is missing), and keys
 * removed without a trace.
 */
final class SharedBucket {
    private static final int STREAM_NOT_FOUND = 10059;

    private SharedBucket() {
    }

    /**
     * @param name     the bucket's name; its stream is {@code KV_<name>}
     * @param replicas as many as the event stream has
     * @param what     what it holds, for the error
     * @throws IOException if it cannot be opened or created now
     */
    static KeyValue open(Connection nats, String name, int replicas, Duration timeout, String what)
            throws IOException {
        KeyValueOptions options = KeyValueOptions.builder().jsRequestTimeout(timeout).build();
        try {
            KeyValueManagement management = nats.keyValueManagement(options);
            try {
                management.getStatus(name);
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != STREAM_NOT_FOUND) {
                    throw e;
                }
                management.create(KeyValueConfiguration.builder().name(name).replicas(replicas)
                        .storageType(StorageType.File).maxHistoryPerKey(1).build());
            }
            return nats.keyValue(name, options);
        } catch (JetStreamApiException e) {
            throw new IOException("the cluster's " + what + " (" + name + ") cannot be opened: " + e.getMessage(), e);
        }
    }

    /**
     * Removes keys by purging their subject from the bucket's stream, so that no delete marker is left behind.
     *
     * @param keys a key, or a pattern of keys ({@code 12.>})
     * @return how many entries went
     */
    static long purge(JetStreamManagement management, KeyValue bucket, String keys)
            throws IOException, JetStreamApiException {
        String name = bucket.getBucketName();
        return management.purgeStream("KV_" + name, PurgeOptions.subject("$KV." + name + "." + keys)).getPurged();
    }
}

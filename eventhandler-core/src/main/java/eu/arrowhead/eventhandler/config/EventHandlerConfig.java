package eu.arrowhead.eventhandler.config;

import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The server's configuration, typed and validated. Each component is one key of
 * {@code config/eventhandler.properties}, where its meaning and default are documented.
 */
public record EventHandlerConfig(
        String serverHost,
        int serverPort,
        int selectorThreads,
        int workerThreads,
        int workerQueue,
        Duration idleTimeout,
        Duration writeTimeout,
        Duration shutdownGrace,
        int maxHeaderBytes,
        int maxIncompleteHeads,
        int maxSilentConnections,
        Duration bodyTimeout,
        int maxBodyBytes,
        List<String> corsOrigins,
        int maxPayloadBytes,
        int maxRequestBytes,
        int maxBatchEvents,
        Duration timestampTolerance,
        Duration idempotencyWindow,
        int idempotencyMaxKeys,
        Duration heartbeat,
        Duration sseRetry,
        SubscriberLimits subscriberLimits,
        Duration subscriberWriteTimeout,
        int subscriberSendBufferBytes,
        int writerThreads,
        WriteMode subscriberWriteMode,
        int replayWindowEvents,
        long replayWindowBytes,
        long replayTotalBytes,
        int maxTopics,
        Duration topicIdle,
        StoreMode storeMode,
        String storeUrl,
        String storeUser,
        String storePassword,
        int storePoolSize,
        Duration storeTimeout,
        int storeBatchEvents,
        int storeBufferEvents,
        long storeBufferBytes,
        Duration storeSyncTimeout,
        Duration storeRetentionAge,
        long storeRetentionEvents,
        Duration storeRetentionCheck,
        int storeReplayPageEvents,
        int storeReplayQueuePerClient,
        int storeReplayEventsPerSecond,
        int storeQueryMaxEvents,
        String storeIdMarkFile,
        SecurityConfig security,
        PushConfig push,
        ServiceRegistryConfig serviceRegistry,
        ClusterConfig cluster,
        HeapBudget heap,
        Map<String, String> effective) {

    /** How accepted events reach the log ({@code store.mode}). */
    public enum StoreMode { OFF, ASYNC, SYNC }

    /** Which thread writes events to subscribers' sockets ({@code subscriber.write-mode}). */
    public enum WriteMode {
        QUEUED, PUBLISHER_THREAD;

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    static EventHandlerConfig from(Map<String, String> raw) {
        EventHandlerConfig config = parse(raw);
        IneffectiveSettings.refuse(config, changedFromDefaults(raw));
        return config;
    }

    /**
     * Every value checked, but not whether each can take effect in one server: the migration of a single node's
     * log into a cluster's stream reads both the {@code store.*} and the {@code cluster.*} keys.
     */
    static EventHandlerConfig forMigration(Map<String, String> raw) {
        // The stream's link is read as cluster mode reads it, TLS and credentials included, whether or not the
        // single node's configuration says cluster.enabled.
        Map<String, String> asCluster = new LinkedHashMap<>(raw);
        asCluster.put("cluster.enabled", "true");
        EventHandlerConfig config = parse(asCluster);
        if (config.storeMode() == StoreMode.OFF) {
            throw new ConfigException("store.mode is off: there is no single-node log to migrate; give the"
                    + " single node's store.* settings (its configuration file)");
        }
        return config;
    }

    private static EventHandlerConfig parse(Map<String, String> raw) {
        ConfigValues v = new ConfigValues(raw);
        HeapBudget heap = HeapBudget.ofThisJvm();
        SecurityConfig security = SecurityConfig.from(v);
        EventHandlerConfig config = new EventHandlerConfig(
                v.host("server.host"),
                v.integer("server.port", 0, 65_535),
                v.threads("server.selector-threads"),
                v.integer("server.worker-threads", 1, 10_000),
                v.integer("server.worker-queue", 0, 1_000_000),
                v.seconds("server.idle-timeout-seconds", 1),
                v.seconds("server.write-timeout-seconds", 1),
                v.seconds("server.shutdown-grace-seconds", 0),
                v.integer("server.max-header-bytes", 1024, 1 << 20),
                WaitingConnectionLimits.maxIncompleteHeads(v, heap,
                        v.integer("server.max-header-bytes", 1024, 1 << 20)),
                WaitingConnectionLimits.maxSilent(v, heap),
                v.seconds("server.body-timeout-seconds", 1),
                v.integer("server.max-body-bytes", 1, 256 << 20),
                v.origins("http.cors-origins"),
                v.integer("publish.max-payload-bytes", 1, 64 << 20),
                v.integer("publish.max-request-bytes", 1, 256 << 20),
                v.integer("publish.max-batch-events", 1, 1_000_000),
                v.seconds("publish.timestamp-tolerance-seconds", 1),
                v.seconds("publish.idempotency-window-seconds", 1),
                v.integer("publish.idempotency-max-keys", 1, 10_000_000),
                v.seconds("sse.heartbeat-seconds", 1),
                v.millis("sse.retry-millis", 100, 3_600_000),
                SubscriberLimits.from(v, heap),
                v.seconds("subscriber.write-timeout-seconds", 1),
                v.integer("subscriber.send-buffer-bytes", 1024, 1 << 30),
                v.threads("subscriber.writer-threads"),
                v.writeMode("subscriber.write-mode"),
                v.integer("replay.window-events", 0, 10_000_000),
                v.longInteger("replay.window-bytes", 0, Long.MAX_VALUE),
                v.heapBytes("replay.total-max-bytes", heap.replayWindows(), heap),
                TopicLimit.maxCount(v, heap),
                v.seconds("topic.idle-seconds", 1),
                v.storeMode("store.mode"),
                v.jdbcUrl("store.url"),
                v.text("store.user"),
                v.text("store.password"),
                v.integer("store.pool-size", 2, 1000),
                v.seconds("store.timeout-seconds", 1),
                v.integer("store.batch-events", 1, 100_000),
                v.integer("store.buffer-events", 1, 100_000_000),
                v.heapBytes("store.buffer-bytes", heap.storeBuffer(), heap),
                v.seconds("store.sync-timeout-seconds", 1),
                v.seconds("store.retention-seconds", 0),
                v.longInteger("store.retention-events", 0, Long.MAX_VALUE),
                v.seconds("store.retention-check-seconds", 1),
                v.integer("store.replay-page-events", 1, 10_000_000),
                v.integer("store.replay-queue-per-client", 1, 100_000),
                v.integer("store.replay-events-per-second", 0, 100_000_000),
                v.integer("store.query-max-events", 1, 1_000_000),
                v.text("store.id-mark-file"),
                security,
                PushConfig.from(v, heap),
                ServiceRegistryConfig.from(v),
                ClusterConfig.from(v, security, heap),
                heap,
                Collections.unmodifiableMap(new LinkedHashMap<>(raw)));
        v.requireAllRead();
        config.requireOnePublishFitsTheStoreBuffer();
        requireBodiesFitTheHeap(config);
        config.requireIdempotencyKeysFitTheHeap();
        config.requirePartsFitTheHeap();
        return config;
    }

    private static Set<String> changedFromDefaults(Map<String, String> raw) {
        Map<String, String> defaults = ConfigLoader.defaults();
        Set<String> changed = new HashSet<>();
        raw.forEach((key, value) -> {
            if (!value.strip().equals(defaults.get(key))) {
                changed.add(key);
            }
        });
        return changed;
    }

    /**
     * The store's buffer takes a publish whole or refuses it: one smaller than the largest publish could never
     * take it, and its bound on what a crash loses (store.buffer-events) would not hold. A cluster node's awaited
     * acknowledgements stand where the store's buffer stands, and the same holds of them.
     */
    private void requireOnePublishFitsTheStoreBuffer() {
        if (cluster.enabled()) {
            if (cluster.maxPendingAcks() < maxBatchEvents) {
                throw new ConfigException("configuration key 'cluster.max-pending-acks' is " + cluster.maxPendingAcks()
                        + ", less than publish.max-batch-events (" + maxBatchEvents + "): a node sends a publish's"
                        + " events to the stream together, so it must await as many acknowledgements as the largest"
                        + " batch has events; raise it, lower publish.max-batch-events, or raise -Xmx");
            }
            return;
        }
        if (storeMode == StoreMode.OFF) {
            return;
        }
        if (storeBufferEvents < maxBatchEvents) {
            throw new ConfigException("configuration key 'store.buffer-events' is " + storeBufferEvents
                    + ", less than publish.max-batch-events (" + maxBatchEvents + "): the event store's buffer must"
                    + " hold the largest batch");
        }
        if (storeBufferBytes < maxRequestBytes) {
            throw new ConfigException("configuration key 'store.buffer-bytes' is " + storeBufferBytes
                    + ", less than publish.max-request-bytes (" + maxRequestBytes + "): the event store's buffer"
                    + " must hold the largest publish");
        }
    }

    /**
     * Each part's key may be set above its share of the heap, but not all of them: what they may take
     * together must leave the server its own and the collector its room (HeapBudget).
     */
    private void requirePartsFitTheHeap() {
        Map<String, Long> parts = heapParts();
        long total = parts.values().stream().mapToLong(Long::longValue).sum();
        if (total > heap.allParts()) {
            throw new ConfigException("the heap cannot hold what the settings allow: together " + (total >> 20)
                    + " MiB (" + said(parts) + "), more than the " + heap.allPartsSaid() + " they may take; lower"
                    + " the keys you raised, or give the JVM more heap (-Xmx)");
        }
    }

    /** What each part clients can make grow may take, in bytes, by the key or part that bounds it. */
    private Map<String, Long> heapParts() {
        boolean store = storeMode != StoreMode.OFF;
        Map<String, Long> parts = new LinkedHashMap<>();
        parts.put("SSE streams (subscriber.max-count " + subscriberLimits.maxCount() + ")",
                subscriberLimits.streamsHeapBytes());
        parts.put("subscriber.total-queue-max-bytes", subscriberLimits.totalQueueMaxBytes());
        if (cluster.enabled()) {
            parts.put("acknowledgements awaited from the stream (cluster.max-pending-acks " + cluster.maxPendingAcks()
                    + ")", cluster.maxPendingAcks() * ClusterConfig.PENDING_ACK_BYTES);
        } else {
            parts.put("store.buffer-bytes", store ? storeBufferBytes : 0);
            parts.put("H2's page cache", store && storeUrl.startsWith("jdbc:h2:") ? heap.storeCache() : 0);
        }
        parts.put("request bodies", heap.requestBodies());
        parts.put("incomplete heads (server.max-incomplete-heads " + maxIncompleteHeads + ")",
                maxIncompleteHeads * WaitingConnectionLimits.incompleteHeadBytes(maxHeaderBytes));
        parts.put("silent connections (server.max-silent-connections " + maxSilentConnections + ")",
                maxSilentConnections * WaitingConnectionLimits.SILENT_BYTES);
        parts.put("replay.total-max-bytes", replayTotalBytes);
        parts.put("push.total-max-bytes", push.totalMaxBytes());
        parts.put("topics (topic.max-count " + maxTopics + ")", (long) maxTopics * TopicLimit.TOPIC_BYTES);
        return parts;
    }

    private static String said(Map<String, Long> parts) {
        StringBuilder each = new StringBuilder();
        parts.forEach((part, bytes) -> each.append(each.length() == 0 ? "" : ", ").append(part).append(' ')
                .append(bytes >> 10).append(" KiB"));
        return each.toString();
    }

    /** How the heap is shared out, with the bounds derived from it, for the log at start. */
    public String describeHeap() {
        return "the parts clients make grow may take " + heap.allPartsSaid() + ": " + said(heapParts());
    }

    /**
     * Heap one remembered {@code Idempotency-Key} may take, at most: the key (up to 128 characters) and the
     * caller's name as strings, its entry and the map's node. The keys come out of the server's own share.
     */
    public static final long IDEMPOTENCY_KEY_BYTES = 448;

    private void requireIdempotencyKeysFitTheHeap() {
        long budget = heap.maxHeapBytes() / 16;
        if ((long) idempotencyMaxKeys * IDEMPOTENCY_KEY_BYTES > budget) {
            throw new ConfigException("configuration key 'publish.idempotency-max-keys' has the value '"
                    + idempotencyMaxKeys + "'; at up to " + IDEMPOTENCY_KEY_BYTES + " bytes each the keys may take"
                    + " at most a sixteenth of the heap, " + budget / IDEMPOTENCY_KEY_BYTES + " keys with this"
                    + " JVM's -Xmx: lower it or give the JVM more heap");
        }
    }

    private static void requireBodiesFitTheHeap(EventHandlerConfig config) {
        long budget = config.heap().requestBodies();
        for (Map.Entry<String, Integer> limit : Map.of("publish.max-request-bytes", config.maxRequestBytes(),
                "server.max-body-bytes", config.maxBodyBytes()).entrySet()) {
            if (limit.getValue() > budget) {
                throw new ConfigException("configuration key '" + limit.getKey() + "' has the value '"
                        + limit.getValue() + "'; request bodies may hold at most their share of the heap (2/19 of the "
                        + config.heap().allPartsSaid() + "), " + budget
                        + " bytes with this JVM's -Xmx: lower it or give the JVM more heap");
            }
        }
    }

    /** The effective configuration as {@code key=value} lines, values of secret keys masked, for the log. */
    public String describe() {
        StringBuilder out = new StringBuilder();
        effective.forEach((key, value) -> {
            String lower = key.toLowerCase(Locale.ROOT);
            boolean secret = lower.contains("password") || lower.contains("secret") || lower.contains("token");
            out.append("\n  ").append(key).append('=').append(secret && !value.isEmpty() ? "****" : value);
        });
        return out.toString();
    }
}

package eu.arrowhead.eventhandler.metrics;

import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.cluster.ClusterNode;
import eu.arrowhead.eventhandler.delivery.DisconnectReason;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.http.AdmissionControl;
import eu.arrowhead.eventhandler.http.RequestBodies;
import eu.arrowhead.eventhandler.http.WaitingConnections;
import eu.arrowhead.eventhandler.node.NodeBackend;
import eu.arrowhead.eventhandler.node.NodeHealth;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.LogCursors;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.registry.ServiceRegistration;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.topic.Hub;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.IOException;
import java.io.OutputStream;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.ConnectionProbe;
import org.glassfish.grizzly.nio.transport.TCPNIOServerConnection;

/**
 * The server's Prometheus metrics.
 *
 * <p>Per-topic numbers are not Prometheus counters updated on the hot path: the topics count for
 * themselves (they need the numbers for {@code mgmt/topics} anyway) and a collector reads them at scrape
 * time. That costs nothing per event and leaves no stale series behind when a topic is removed.
 */
public final class BrokerMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Map<DisconnectReason, CounterDataPoint> disconnects = new EnumMap<>(DisconnectReason.class);
    private final Histogram publishSeconds;
    private final LongAdder connectionsAccepted = new LongAdder();
    private final LongAdder connectionsClosed = new LongAdder();

    public BrokerMetrics() {
        JvmMetrics.builder().register(registry);
        Counter disconnectCounter = Counter.builder()
                .name("eventhandler_subscriber_disconnects")
                .help("SSE streams ended, by reason")
                .labelNames("reason")
                .register(registry);
        for (DisconnectReason reason : DisconnectReason.values()) {
            disconnects.put(reason, disconnectCounter.labelValues(reason.label()));
        }
        publishSeconds = Histogram.builder()
                .name("eventhandler_publish_handling_seconds")
                .help("Time to handle an accepted publish request, from its body to its id")
                .classicOnly()
                .classicUpperBounds(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1)
                .register(registry);
    }

    /** Adds the gauge and counter of the publishes' {@code Idempotency-Key} answers. */
    private void observe(IdempotencyKeys keys) {
        registry.register(() -> MetricSnapshots.of(
                gauge("eventhandler_idempotency_keys", "Idempotency-Key answers held (at most"
                        + " publish.idempotency-max-keys)", keys.size()),
                counter("eventhandler_idempotency_keys_forgotten_early", "Idempotency keys forgotten before"
                        + " publish.idempotency-window-seconds because publish.idempotency-max-keys were held: a"
                        + " retry with one of them publishes again", keys.forgottenEarly())));
    }

    /** Adds the bounds of the connections waited on for a request's head, and how many were closed to hold them. */
    public void observe(WaitingConnections waiting) {
        registry.register(() -> MetricSnapshots.of(
                gauge("eventhandler_connections_incomplete_heads_max", "Most connections with part of a request's"
                        + " head sent, not all of it (server.max-incomplete-heads)", waiting.maxIncompleteHeads()),
                gauge("eventhandler_connections_silent_max", "Most connections that have sent nothing since accepted"
                        + " or since their last request (server.max-silent-connections)", waiting.maxSilent()),
                counter("eventhandler_connections_displaced", "Connections closed to hold"
                        + " server.max-silent-connections or server.max-incomplete-heads: the one waiting longest, or"
                        + " the newest but one while all had waited under a second", waiting.displaced())));
    }

    /** Adds the gauges of the request bodies held while they arrive or wait for a worker. */
    public void observe(RequestBodies bodies) {
        registry.register(() -> MetricSnapshots.of(
                gauge("eventhandler_request_bodies_held_bytes", "Bytes of request bodies held now, arriving or"
                        + " waiting for a worker or for the event log", bodies.heldBytes()),
                gauge("eventhandler_request_bodies_max_bytes", "Most bytes of request bodies held at once (their"
                        + " share of the heap); past it a body is refused with 503", bodies.budgetBytes())));
    }

    /** Adds the gauges and counters read from the hub and the open streams at each scrape. */
    public void observe(Hub hub, StreamSupervisor streams) {
        registry.register(() -> {
            List<TopicStats> topics = hub.stats();
            Hub.WindowUse windows = hub.windowUse();
            long[] depths = streams.queueDepths();
            long[] bytes = streams.queuedBytes();
            return MetricSnapshots.of(
                    perTopic("eventhandler_events_published", "Events published, per topic", topics,
                            TopicStats::published),
                    perTopic("eventhandler_events_delivered", "Event deliveries written to SSE subscribers,"
                            + " per topic", topics, TopicStats::delivered),
                    perTopic("eventhandler_events_dropped", "Event deliveries abandoned because a subscriber"
                            + " fell behind or went away, per topic", topics, TopicStats::dropped),
                    topicSubscribers(topics),
                    gauge("eventhandler_subscribers", "Open SSE streams", streams.openStreams()),
                    gauge("eventhandler_subscriber_queued_events", "Events waiting in all subscriber queues",
                            depths[0]),
                    gauge("eventhandler_subscriber_queue_depth_max", "Events waiting in the longest"
                            + " subscriber queue", depths[1]),
                    gauge("eventhandler_subscriber_queued_bytes", "Bytes of frames waiting in all subscriber"
                            + " queues (bounded by subscriber.total-queue-max-bytes)", bytes[0]),
                    gauge("eventhandler_subscriber_queued_bytes_peak", "Most bytes of frames all subscriber"
                            + " queues have held together since the start", bytes[1]),
                    gauge("eventhandler_subscriber_queue_bytes_peak", "Most bytes one subscriber queue has held"
                            + " since the start (bounded by subscriber.queue-max-bytes)", bytes[2]),
                    gauge("eventhandler_subscribers_max", "Most SSE streams at once (subscriber.max-count)",
                            streams.maxStreams()),
                    gauge("eventhandler_subscribers_heap_bytes", "Heap the open SSE streams are estimated to"
                            + " hold, by their requests' headers", streams.streamsHeapCharged()),
                    gauge("eventhandler_topics", "Topics held", topics.size()),
                    gauge("eventhandler_topics_max", "Most topics at once (topic.max-count)", hub.maxTopics()),
                    counter("eventhandler_topics_evicted", "Idle topics that gave way to a new one at"
                            + " topic.max-count", hub.evictions()),
                    gauge("eventhandler_replay_windows_bytes", "Heap the replay windows of all topics hold"
                            + " together (bounded by replay.total-max-bytes)", windows.heapBytes()),
                    counter("eventhandler_replay_windows_trims", "Times the largest replay windows were cut"
                            + " to keep all within replay.total-max-bytes", windows.trims()),
                    counter("eventhandler_connections_accepted", "TCP connections accepted",
                            connectionsAccepted.sum()),
                    gauge("eventhandler_connections_open", "TCP connections open",
                            connectionsAccepted.sum() - connectionsClosed.sum()),
                    gauge("eventhandler_last_event_id", "Id of the last published event", hub.lastId()));
        });
    }

    /**
     * Adds the backend's gauges and counters, read at each scrape: a single node's event store's, or a cluster
     * node's view of the cluster (whose stream is its log); none with {@code store.mode=off}.
     */
    public void observe(NodeBackend backend) {
        if (backend.idempotencyKeys() != null) {
            observe(backend.idempotencyKeys());
        }
        registry.register(() -> {
            NodeHealth health = backend.health();
            if (health.cluster() != null) {
                return cluster(health.cluster());
            }
            return health.log() == null ? MetricSnapshots.of() : store(health.log());
        });
        registry.register(() -> {
            LogCursors cursors = backend.pushCursors();
            if (cursors == null) {
                return MetricSnapshots.of();
            }
            return MetricSnapshots.of(
                    perSubscription("eventhandler_push_cursor_skipped_ids", "Ids a push subscription's cursor passed"
                            + " that the event log no longer held (retention deleted them, or they were lost): at most"
                            + " that many of its events were never POSTed; a subscription appears once it has passed"
                            + " such a hole", cursors.skippedIds()));
        });
        registry.register(() -> {
            DeadLetterLists letters = backend.deadLetterLists();
            if (letters == null) {
                return MetricSnapshots.of();
            }
            return MetricSnapshots.of(
                    perSubscription("eventhandler_push_dead_letters", "Events a push subscriber refused for good"
                            + " (4xx other than 408 and 429, push.poison-retries more times), set aside on its"
                            + " subscription's dead-letter list (by this node; a cluster's are the sum over its nodes)",
                            letters.setAsideCounts()),
                    perSubscription("eventhandler_push_dead_letters_dropped", "Dead letters dropped from a push"
                            + " subscription's list, the oldest, past push.dead-letter-max", letters.droppedCounts()),
                    gauge("eventhandler_push_paused_subscriptions", "Push subscriptions paused after"
                            + " push.pause-after-dead-letters events in a row were set aside; a sysop resumes them",
                            letters.paused()));
        });
    }

    /** A counter with one data point per push subscription, labelled with its id. */
    private static CounterSnapshot perSubscription(String name, String help, Map<Long, Long> counts) {
        CounterSnapshot.Builder counter = CounterSnapshot.builder().name(name).help(help);
        counts.forEach((id, count) -> counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                .labels(Labels.of("subscription", Long.toString(id))).value(count).build()));
        return counter.build();
    }

    private static MetricSnapshots store(EventStore.Status status) {
        return MetricSnapshots.of(
                gauge("eventhandler_store_up", "1 while the event store can write, 0 while it cannot",
                        status.isUp() ? 1 : 0),
                gauge("eventhandler_store_buffered_events", "Events accepted but not yet written to the"
                        + " event store", status.bufferedEvents()),
                gauge("eventhandler_store_buffered_bytes", "Heap held by the events accepted but not yet"
                        + " written (estimated; bounded by store.buffer-bytes)", status.bufferedBytes()),
                gauge("eventhandler_store_last_logged_id", "Id of the last event written to the event store",
                        status.lastLoggedId()),
                counter("eventhandler_store_written_events", "Events written to the event store",
                        status.writtenEvents()),
                counter("eventhandler_store_dropped_events", "Events dropped from the event store because"
                        + " its buffer was full while the database was down", status.droppedEvents()),
                counter("eventhandler_store_refused_publishes", "Publishes refused with 503 because the event"
                        + " store's writer was behind (its buffer full while the database worked)",
                        status.refusedPublishes()),
                gauge("eventhandler_store_damaged_ranges", "Ranges of ids H2 cannot read because its file is"
                        + " damaged (skipped, told to resumes as missing)", status.damagedRanges().size()),
                gauge("eventhandler_store_missing_ranges", "Ranges of ids the event log does not hold (dropped"
                        + " while the database was down, or lost in a crash); resumes across one are told",
                        status.missingRanges()),
                counter("eventhandler_store_failed_transactions", "Event store write transactions that failed"
                        + " (and were retried)", status.failedTransactions()));
    }

    private static MetricSnapshots cluster(ClusterNode.View view) {
        long last = view.streamLastId() == null ? view.deliveredId() : view.streamLastId();
        return MetricSnapshots.of(
                gauge("eventhandler_cluster_up", "1 while this node has a NATS server, 0 while it is cut off",
                        view.isUp() ? 1 : 0),
                gauge("eventhandler_cluster_stream_last_id", "The cluster stream's last id, as its leader says",
                        last),
                gauge("eventhandler_cluster_delivery_lag", "Events in the cluster's stream this node has not yet"
                        + " delivered to its subscribers", Math.max(0, last - view.deliveredId())),
                gauge("eventhandler_cluster_stream_replicas", "Copies of the cluster's stream besides its leader's",
                        view.replicas() == null ? 0 : view.replicas().size()),
                counter("eventhandler_cluster_unreadable_messages", "Messages on the stream's subjects that were"
                        + " not events, skipped", view.unreadable()),
                gauge("eventhandler_cluster_pending_acks", "Acknowledgements this node awaits from the cluster's"
                        + " stream, each sending of an event one (at most cluster.max-pending-acks)",
                        view.pendingAcks()));
    }

    /** Adds the front door's gauge, read at each scrape. */
    public void observe(AdmissionControl front) {
        registry.register(() -> MetricSnapshots.of(gauge("eventhandler_connections_held_for_unread_answers",
                "Connections not read on because the answers their clients have not read pass 64 KiB (HTTP"
                        + " pipelining without reading)", front.connectionsHeldForUnreadAnswers())));
    }

    /** Adds whether the Service Registry holds the Event Handler's services, read at each scrape. */
    public void observe(ServiceRegistration registration) {
        registry.register(() -> MetricSnapshots.of(gauge("eventhandler_service_registry_registered",
                "1 while the Event Handler's services are registered in the Arrowhead Service Registry, 0 until"
                        + " then", registration.registered() ? 1 : 0)));
    }

    /** Adds the push subscriptions' gauges and counters, read at each scrape. */
    public void observe(PushSubscriptions subscriptions, PushSender sender) {
        registry.register(() -> MetricSnapshots.of(
                gauge("eventhandler_push_subscriptions", "Push subscriptions held", subscriptions.count()),
                gauge("eventhandler_push_queued_events", "Events held in memory for push subscribers (with an"
                        + " event store, those of a subscriber that is behind are read from the log as it catches up)",
                        subscriptions.queued()),
                gauge("eventhandler_push_queued_bytes", "Heap the events waiting for push subscribers are"
                        + " charged (push.total-max-bytes)", subscriptions.queuedBytes()),
                gauge("eventhandler_push_waiting_for_room", "Push subscriptions whose cursor holds nothing and"
                        + " waits for room in push.total-max-bytes to take its next event from the log",
                        subscriptions.waitingForRoom()),
                gauge("eventhandler_push_subscriptions_bytes", "Heap the push subscriptions are estimated to"
                        + " hold (push.total-max-bytes)", subscriptions.subscriptionBytes()),
                gauge("eventhandler_push_connections", "Connections open to push subscribers, in use or kept"
                        + " alive (one per subscription at most: each has one POST in flight)",
                        sender.openConnections()),
                counter("eventhandler_push_delivered_events", "Events POSTed to push subscribers with a 2xx"
                        + " answer", sender.delivered()),
                counter("eventhandler_push_failed_attempts", "POSTs to push subscribers that failed (each retry"
                        + " counts)", sender.failedAttempts()),
                CounterSnapshot.builder().name("eventhandler_push_dropped_events")
                        .help("Events not delivered to a push subscriber: its queue was full, or the last retry"
                                + " failed (store.mode=off only: with an event store nothing the log holds is dropped)")
                        .dataPoint(dropped("queue-full", sender.droppedQueueFull()))
                        .dataPoint(dropped("retries-exhausted", sender.droppedRetriesExhausted()))
                        .build()));
    }

    private static CounterSnapshot.CounterDataPointSnapshot dropped(String reason, long value) {
        return CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("reason", reason))
                .value(value).build();
    }

    /**
     * Counts accepted and closed connections: how clients prove that they reuse their connection, and how
     * operators see connection churn.
     */
    public ConnectionProbe connectionProbe() {
        return new ConnectionProbe.Adapter() {
            @Override
            public void onAcceptEvent(Connection serverConnection, Connection clientConnection) {
                connectionsAccepted.increment();
            }

            @Override
            public void onCloseEvent(Connection connection) {
                if (!(connection instanceof TCPNIOServerConnection)) {
                    connectionsClosed.increment();
                }
            }
        };
    }

    /** Counts an ended SSE stream. */
    public void disconnected(DisconnectReason reason, int droppedEvents) {
        disconnects.get(reason).inc();
    }

    /** Records the handling time of an accepted publish. */
    public void publishHandled(long nanos) {
        publishSeconds.observe(nanos / 1e9);
    }

    /** The content type of {@link #write}. */
    public String contentType() {
        return writer.getContentType();
    }

    /** Writes every metric in the Prometheus text format. */
    public void write(OutputStream out) throws IOException {
        writer.write(out, registry.scrape());
    }

    private static CounterSnapshot perTopic(String name, String help, List<TopicStats> topics,
                                            ToLongFunction<TopicStats> value) {
        CounterSnapshot.Builder builder = CounterSnapshot.builder().name(name).help(help);
        for (TopicStats topic : topics) {
            builder.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                    .labels(Labels.of("topic", topic.eventType()))
                    .value(value.applyAsLong(topic))
                    .build());
        }
        return builder.build();
    }

    private static GaugeSnapshot topicSubscribers(List<TopicStats> topics) {
        GaugeSnapshot.Builder builder = GaugeSnapshot.builder()
                .name("eventhandler_topic_subscribers").help("Open SSE streams, per topic");
        for (TopicStats topic : topics) {
            builder.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("topic", topic.eventType()))
                    .value(topic.subscribers())
                    .build());
        }
        return builder.build();
    }

    private static CounterSnapshot counter(String name, String help, double value) {
        return CounterSnapshot.builder().name(name).help(help)
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(value).build())
                .build();
    }

    private static GaugeSnapshot gauge(String name, String help, double value) {
        return GaugeSnapshot.builder().name(name).help(help)
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value).build())
                .build();
    }
}

package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.config.EventHandlerConfig.WriteMode;
import eu.arrowhead.eventhandler.config.SubscriberLimits;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Replay;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * The server's delivery without HTTP: a hub, the supervisor, publishes as the publishing thread runs them, and
 * streams made, registered and started as {@link EventStreamHandler} does, each over the port a test gives it.
 * Every stream's end is kept as the metrics would count it.
 */
final class DeliveryRig {
    static final PublishedEvent OPENING = PublishedEvent.control(":ok\n\n".getBytes(StandardCharsets.US_ASCII));
    static final Duration HEARTBEAT = Duration.ofSeconds(15);
    static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);
    private static final int MAX_STREAMS = 100;

    final Hub hub;
    final StreamSupervisor supervisor;
    private final Executor writers;
    private final PublisherWrites publishes;
    private final StreamRefusal refusal = new StreamRefusal(Duration.ofSeconds(2));
    private final List<Ended> ended = new ArrayList<>();

    /** A stream's end: why, and how many events it still held. */
    record Ended(DisconnectReason reason, int dropped) {
    }

    /**
     * @param queueMaxBytes {@code subscriber.queue-max-bytes}; all queues together may hold far more
     * @param writers       the writer threads
     */
    DeliveryRig(LocalHub local, long queueMaxBytes, Executor writers) {
        this.hub = local.hub();
        this.writers = writers;
        this.supervisor = new StreamSupervisor(hub, new SubscriberLimits(MAX_STREAMS,
                MAX_STREAMS * SubscriberLimits.MIN_STREAM_BYTES, queueMaxBytes, 4L * MAX_STREAMS * queueMaxBytes),
                HEARTBEAT, WRITE_TIMEOUT, this::ended);
        this.publishes = new PublisherWrites(local.log(), WriteMode.QUEUED, WRITE_TIMEOUT.toNanos());
    }

    /** A stream of the topics over {@code port}, known to the supervisor but not yet registered with the hub. */
    SubscriberQueue open(StreamPort port, String... topicKeys) {
        return supervisor.admit(SubscriberLimits.MIN_STREAM_BYTES, charge -> new SubscriberQueue(Set.of(topicKeys),
                new StreamRequest(null, Set.of(), Map.of()), SubscriberFilter.NONE, 0, port, charge,
                supervisor.queueBudget(), writers, supervisor::closed, refusal));
    }

    /** Registers the stream with the hub: from now on live events queue up behind its replay. */
    Replay subscribe(SubscriberQueue stream, OptionalLong afterId) {
        return hub.subscribe(stream.topicKeys(), stream, afterId);
    }

    /** A live stream of the topics over {@code port}, registered and started. */
    SubscriberQueue openLive(StreamPort port, String... topicKeys) {
        SubscriberQueue stream = open(port, topicKeys);
        subscribe(stream, OptionalLong.empty());
        stream.start(OPENING, null, List.of());
        return stream;
    }

    /** A publish as the publishing thread runs it: the log and the hub, then the writes it leaves to this thread. */
    long publish(List<IncomingEvent> events) {
        return publishes.publish(events, PublishKey.NONE).join()[0];
    }

    /** Bytes all subscriber queues hold now. */
    long queuedBytes() {
        return supervisor.queuedBytes()[0];
    }

    synchronized List<Ended> ended() {
        return List.copyOf(ended);
    }

    private synchronized void ended(DisconnectReason reason, int dropped) {
        ended.add(new Ended(reason, dropped));
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds this node's hub from the stream: every event, in sequence order, with its sequence as its id. This is
 * how every node delivers every event, whichever node took its publish.
 *
 * <p>An ordered consumer: JetStream pushes the stream's messages to this node without acknowledgements, and the
 * client recreates the consumer from the last sequence it saw when a message is missing. The consumer lives on
 * one NATS server; when the node's connection moves to another server (that one failed), the client would notice
 * only after several missed heartbeats, seconds to tens of seconds, so the node {@linkplain #restart restarts} the
 * feed itself after the hub's last id as soon as it is connected again. A restart makes the new consumer before it
 * lets go of the old one, which may still deliver (jnats recreates an ordered consumer itself after some
 * reconnects): a try that fails, as tries do while JetStream elects leaders, never stops a feed that works. Both
 * hand every event in order on one dispatcher thread, and the hub ignores ids it has delivered, so while two
 * deliver each event is taken once, from whichever brings it first.
 *
 * <p>Each event is delivered on NATS's dispatcher thread (one, so in order), which then writes to the subscribers
 * that were idle itself, as a publishing thread does in single-node mode.
 */
final class StreamFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StreamFeed.class);
    private static final long NO_HEARTBEAT_ALARM_MILLIS = Duration.ofDays(1).toMillis();

    private final Hub hub;
    private final StreamMessages messages;
    private final String stream;
    private final Connection nats;
    private final Dispatcher dispatcher;
    private final AtomicLong unreadable = new AtomicLong();
    /** The last unreadable message counted: while two consumers deliver, each comes twice. Dispatcher thread. */
    private volatile long lastUnreadableId;
    /** The consumer that delivers; written under this. A replaced one, or one whose making failed, delivers nothing. */
    private volatile Consumer current;
    /** The consumer being made, which may deliver before its making returns; written under this. */
    private volatile Consumer pending;

    private StreamFeed(Hub hub, StreamMessages messages, String stream, Connection nats) {
        this.hub = hub;
        this.messages = messages;
        this.stream = stream;
        this.nats = nats;
        this.dispatcher = nats.createDispatcher();
    }

    /** Starts feeding the hub with the events after its last id. */
    static StreamFeed start(Connection nats, JetStream jetStream, String stream, StreamMessages messages, Hub hub)
            throws IOException {
        StreamFeed feed = new StreamFeed(hub, messages, stream, nats);
        try {
            feed.subscribe(jetStream);
        } catch (IOException | RuntimeException e) {
            nats.closeDispatcher(feed.dispatcher);
            throw e;
        }
        return feed;
    }

    /**
     * Replaces the consumer with a new one that starts after the hub's last id, asking JetStream through
     * {@code through}: one try, which the node repeats until it succeeds. Should the try fail, the old consumer
     * goes on delivering.
     *
     * @return the id after which the new consumer starts
     */
    synchronized long restart(JetStream through) throws IOException {
        Consumer replaced = current;
        long after = subscribe(through);
        if (replaced != null) {
            replaced.stop(dispatcher);
        }
        return after;
    }

    private synchronized long subscribe(JetStream through) throws IOException {
        long after = hub.lastId();
        PushSubscribeOptions options = PushSubscribeOptions.builder()
                .stream(stream)
                .ordered(true)
                .configuration(ConsumerConfiguration.builder()
                        .deliverPolicy(DeliverPolicy.ByStartSequence)
                        .startSequence(after + 1)
                        .build())
                // jnats would recreate the consumer itself after missed heartbeats (15 s), also for one already
                // replaced, whose subscription is gone; FeedWatch and the restart on reconnect do that job.
                .messageAlarmTime(NO_HEARTBEAT_ALARM_MILLIS)
                .build();
        Consumer consumer = new Consumer();
        pending = consumer;
        try {
            consumer.subscription = through.subscribe(messages.allSubjects(), dispatcher, consumer::deliver, false,
                    options);
        } catch (JetStreamApiException e) {
            throw new IOException("cannot read the cluster's stream " + stream + ": " + e.getMessage(), e);
        } finally {
            pending = null;
        }
        current = consumer;
        LOG.debug("feeding the hub from the stream {} after id {}", stream, after);
        return after;
    }

    /** One ordered consumer's handler. */
    private final class Consumer {
        volatile JetStreamSubscription subscription;

        void deliver(Message message) {
            // A subscription jnats registered for a making that then failed stays out, as do replaced ones.
            if (this != current && this != pending) {
                return;
            }
            long id = message.metaData().streamSequence();
            IncomingEvent event;
            try {
                event = messages.decode(message.getHeaders(), message.getData());
            } catch (IllegalArgumentException e) {
                // Someone else writes on the stream's subjects: skipped, counted, and said once.
                if (id <= lastUnreadableId) {
                    return;
                }
                lastUnreadableId = id;
                if (unreadable.getAndIncrement() == 0) {
                    LOG.warn("the cluster's stream holds a message the Event Handler did not write (sequence {},"
                            + " subject {}): {}; it and any like it are skipped", id, message.getSubject(),
                            e.getMessage());
                }
                return;
            }
            Publication publication = Publication.queued();
            try {
                hub.deliver(id, List.of(event), publication);
            } finally {
                publication.runDeferred();
            }
        }

        void stop(Dispatcher from) {
            try {
                from.unsubscribe(subscription);
            } catch (RuntimeException e) {
                // already gone with the server it lived on; it delivers nothing more either way
            }
        }
    }

    /** Messages on the stream's subjects that were not events, skipped. */
    long unreadable() {
        return unreadable.get();
    }

    /** The last sequence of the stream this feed has seen: delivered to the hub, or skipped as unreadable. */
    long lastSeenId() {
        return Math.max(hub.lastId(), lastUnreadableId);
    }

    @Override
    public synchronized void close() {
        current = null;
        if (dispatcher.isActive()) {
            nats.closeDispatcher(dispatcher);
        }
    }
}

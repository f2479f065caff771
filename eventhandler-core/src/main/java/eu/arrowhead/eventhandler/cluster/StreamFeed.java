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
 * feed itself after the hub's last id as soon as it is connected again. Messages of a replaced consumer that are
 * still on their way are ignored: each consumer has its own handler, and only the current one delivers.
 *
 * <p>Each event is delivered on NATS's dispatcher thread (one, so in order), which then writes to the subscribers
 * that were idle itself, as a publishing thread does in single-node mode.
 */
final class StreamFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StreamFeed.class);

    private final Hub hub;
    private final StreamMessages messages;
    private final JetStream jetStream;
    private final String stream;
    private final Connection nats;
    private final Dispatcher dispatcher;
    private final AtomicLong unreadable = new AtomicLong();
    /** The handler of the consumer that delivers now; replaced handlers deliver nothing more. */
    private volatile Consumer current;

    private StreamFeed(Hub hub, StreamMessages messages, JetStream jetStream, String stream, Connection nats) {
        this.hub = hub;
        this.messages = messages;
        this.jetStream = jetStream;
        this.stream = stream;
        this.nats = nats;
        this.dispatcher = nats.createDispatcher();
    }

    /** Starts feeding the hub with the events after its last id. */
    static StreamFeed start(Connection nats, JetStream jetStream, String stream, StreamMessages messages, Hub hub)
            throws IOException {
        StreamFeed feed = new StreamFeed(hub, messages, jetStream, stream, nats);
        try {
            feed.subscribe();
        } catch (IOException | RuntimeException e) {
            nats.closeDispatcher(feed.dispatcher);
            throw e;
        }
        return feed;
    }

    /**
     * Replaces the consumer with a new one that starts after the hub's last id, asking JetStream through
     * {@code quick}: one short try, which the node repeats until it succeeds, rather than one try per full timeout.
     */
    synchronized void restart(JetStream quick) throws IOException {
        Consumer replaced = current;
        current = null;
        if (replaced != null && replaced.subscription != null) {
            try {
                dispatcher.unsubscribe(replaced.subscription);
            } catch (IllegalStateException e) {
                // already gone with the server it lived on
            }
        }
        subscribe(quick);
    }

    private synchronized void subscribe() throws IOException {
        subscribe(jetStream);
    }

    private synchronized void subscribe(JetStream through) throws IOException {
        long after = hub.lastId();
        PushSubscribeOptions options = PushSubscribeOptions.builder()
                .stream(stream)
                .ordered(true)
                .configuration(ConsumerConfiguration.builder()
                        .deliverPolicy(DeliverPolicy.ByStartSequence)
                        .startSequence(after + 1)
                        .build())
                .build();
        Consumer consumer = new Consumer();
        current = consumer;
        try {
            consumer.subscription = through.subscribe(messages.allSubjects(), dispatcher, consumer::deliver, false,
                    options);
        } catch (JetStreamApiException e) {
            current = null;
            throw new IOException("cannot read the cluster's stream " + stream + ": " + e.getMessage(), e);
        }
        LOG.debug("feeding the hub from the stream {} after id {}", stream, after);
    }

    /** One ordered consumer's handler. */
    private final class Consumer {
        JetStreamSubscription subscription;

        void deliver(Message message) {
            if (current != this) {
                return;
            }
            long id = message.metaData().streamSequence();
            IncomingEvent event;
            try {
                event = messages.decode(message.getHeaders(), message.getData());
            } catch (IllegalArgumentException e) {
                // Someone else writes on the stream's subjects: skipped, counted, and said once.
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
    }

    /** Messages on the stream's subjects that were not events, skipped. */
    long unreadable() {
        return unreadable.get();
    }

    @Override
    public void close() {
        current = null;
        if (dispatcher.isActive()) {
            nats.closeDispatcher(dispatcher);
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds this node's hub from the stream: every event, in sequence order, with its sequence as its id. This is
 * how every node delivers every event, whichever node took its publish.
 *
 * <p>An ordered consumer: JetStream pushes the stream's messages to this node without acknowledgements, and the
 * client recreates the consumer from the last sequence it saw whenever a message is missing or the connection
 * moved to another server, so the hub sees each event once and in order. It starts after the hub's last id.
 * Each event is delivered on NATS's dispatcher thread, which then writes to the subscribers that were idle
 * itself, as a publishing thread does in single-node mode.
 */
final class StreamFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StreamFeed.class);

    private final Hub hub;
    private final StreamMessages messages;
    private final Dispatcher dispatcher;
    private final Connection nats;
    private final AtomicLong unreadable = new AtomicLong();

    private StreamFeed(Hub hub, StreamMessages messages, Dispatcher dispatcher, Connection nats) {
        this.nats = nats;
        this.hub = hub;
        this.messages = messages;
        this.dispatcher = dispatcher;
    }

    /** Starts feeding the hub with the events after its last id. */
    static StreamFeed start(ClusterConnection connection, JetStream jetStream, String stream, StreamMessages messages,
                            Hub hub) throws IOException {
        Dispatcher dispatcher = connection.nats().createDispatcher();
        StreamFeed feed = new StreamFeed(hub, messages, dispatcher, connection.nats());
        PushSubscribeOptions options = PushSubscribeOptions.builder()
                .stream(stream)
                .ordered(true)
                .configuration(ConsumerConfiguration.builder()
                        .deliverPolicy(DeliverPolicy.ByStartSequence)
                        .startSequence(hub.lastId() + 1)
                        .build())
                .build();
        try {
            jetStream.subscribe(messages.allSubjects(), dispatcher, feed::deliver, false, options);
        } catch (JetStreamApiException e) {
            connection.nats().closeDispatcher(dispatcher);
            throw new IOException("cannot read the cluster's stream " + stream + ": " + e.getMessage(), e);
        }
        return feed;
    }

    private void deliver(Message message) {
        long id = message.metaData().streamSequence();
        IncomingEvent event;
        try {
            event = messages.decode(message.getHeaders(), message.getData());
        } catch (IllegalArgumentException e) {
            // Someone else writes on the stream's subjects: skipped, counted, and said once.
            if (unreadable.getAndIncrement() == 0) {
                LOG.warn("the cluster's stream holds a message the Event Handler did not write (sequence {}, subject"
                        + " {}): {}; it and any like it are skipped", id, message.getSubject(), e.getMessage());
            }
            return;
        }
        Publication publication = Publication.queued();
        try {
            hub.deliverLogged(id, event, publication);
        } finally {
            publication.runDeferred();
        }
    }

    /** Messages on the stream's subjects that were not events, skipped. */
    long unreadable() {
        return unreadable.get();
    }

    @Override
    public void close() {
        if (dispatcher.isActive()) {
            nats.closeDispatcher(dispatcher);
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.ReadScope;
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
 * Feeds this node's hub from the stream: every event its subscribers may want, in sequence order, with its
 * sequence as its id. This is how every node delivers every event its subscribers want, whichever node took its
 * publish.
 *
 * <p>The consumer reads the subject of the hub's {@link ReadScope}: while one event type has
 * subscribers here, JetStream sends this node only that type's messages, and a node carries only its own
 * subscribers' share of the stream. nats-server 2.9 takes one filter subject per consumer, so two types or more
 * are read as every type. When the hub's scope changes, the node {@linkplain #restart restarts} the feed in the
 * new scope after the hub's last id. Until the new consumer is made, a wider one goes on delivering what the
 * narrower scope covers; a narrower one, which never read a type a new subscriber wants, is ignored.
 *
 * <p>An ordered consumer: JetStream pushes the stream's messages to this node without acknowledgements, and the
 * client recreates the consumer from the last sequence it saw when a message is missing. The consumer lives on
 * one NATS server; when the node's connection moves to another server (that one failed), the client would notice
 * only after several missed heartbeats, seconds to tens of seconds, so the node {@linkplain #restart restarts} the
 * feed itself after the hub's last id as soon as it is connected again. A restart makes the new consumer before it
 * lets go of the old one, which may still deliver (jnats recreates an ordered consumer itself after some
 * reconnects): a try that fails, as tries do while JetStream elects leaders, never stops a feed that works
 * (short of a wider scope, above). Both
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
        // The scope first: should it change before the last id is read, this consumer delivers nothing and is
        // replaced; read the other way round, it could start after events of a type the new scope added.
        ReadScope scope = hub.readScope();
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
        String subject = messages.subjectOf(scope);
        Consumer consumer = new Consumer(new Reading(scope, subject, !subject.equals(messages.allSubjects())));
        pending = consumer;
        try {
            consumer.subscription = through.subscribe(consumer.reading.subject(), dispatcher, consumer::deliver,
                    false, options);
            // Current before it stops being pending: a message the dispatcher hands it in between would be dropped,
            // and lost if the hub ignores the consumer it replaces (one that never read a type a subscriber wants).
            current = consumer;
        } catch (JetStreamApiException e) {
            throw new IOException("cannot read the cluster's stream " + stream + ": " + e.getMessage(), e);
        } finally {
            pending = null;
        }
        LOG.debug("feeding the hub from the stream {} after id {}, subject {}", stream, after,
                consumer.reading.subject());
        return after;
    }

    /**
     * What one consumer reads: the hub's scope when it was made, and the subject that covers it.
     *
     * @param filtered whether the subject leaves some of the stream's messages out
     */
    record Reading(ReadScope scope, String subject, boolean filtered) {
    }

    /** One ordered consumer's handler. */
    private final class Consumer {
        final Reading reading;
        volatile JetStreamSubscription subscription;
        /**
         * Set when the hub refused a delivery: its scope no longer covers the hub's, and the events it dropped must
         * not be followed by later ones, should the hub's scope come back to it. Dispatcher thread.
         */
        boolean refused;

        Consumer(Reading reading) {
            this.reading = reading;
        }

        void deliver(Message message) {
            // A subscription jnats registered for a making that then failed stays out, as do replaced ones.
            if (this != current && this != pending || refused) {
                return;
            }
            long id = message.metaData().streamSequence();
            IncomingEvent event;
            try {
                event = messages.decode(message.getHeaders(), message.getData());
            } catch (IllegalArgumentException e) {
                // Someone else writes on the stream's subjects: passed by as an event of no subscriber's, so that
                // the hub's last id is not left behind the stream, counted, and said once.
                hub.skipTo(reading.scope(), id);
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
                refused = !hub.deliver(reading.scope(), id, List.of(event), publication);
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

    /** What the consumer delivering reads, or {@code null} before one does. */
    Reading reading() {
        Consumer delivering = current;
        return delivering == null ? null : delivering.reading;
    }

    /** Whether the consumer delivering reads what the hub wants read now: no more, no less. */
    boolean readsHubScope() {
        Reading reading = reading();
        return reading != null && reading.scope().equals(hub.readScope());
    }

    /**
     * Tells the hub that the stream holds no event of {@code reading}'s subject up to {@code id} that the feed has
     * not delivered: the caller asked the stream, after {@code id} was its last. Ignored if that scope no longer
     * covers the hub's.
     */
    void skipTo(Reading reading, long id) {
        hub.skipTo(reading.scope(), id);
    }

    /** Tells the hub the stream's last sequence: a resume up to it need not wait for a narrower feed. */
    void streamReached(long id) {
        hub.streamReached(id);
    }

    /** Messages on the stream's subjects that were not events, skipped. */
    long unreadable() {
        return unreadable.get();
    }

    /**
     * The last sequence of the stream this feed has passed: delivered to the hub, skipped as unreadable, or told
     * of by {@link #skipTo}.
     */
    long lastSeenId() {
        return hub.lastId();
    }

    @Override
    public synchronized void close() {
        current = null;
        if (dispatcher.isActive()) {
            nats.closeDispatcher(dispatcher);
        }
    }
}

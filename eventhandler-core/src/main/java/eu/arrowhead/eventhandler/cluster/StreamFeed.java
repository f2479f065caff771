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
import java.util.ArrayList;
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
 * <p>Events are read on NATS's dispatcher thread (one, so in order). While more messages are queued behind an event,
 * it is held, up to {@link #MOST_HELD}, and the events are handed to the hub together: the hub takes its lock once
 * for them, and each subscriber gets them in one write. A node that falls behind (its share of the CPU spent, a
 * burst of publishes) so catches up at a lower cost per event; one that keeps up hands each event over alone, as
 * before. Then the dispatcher thread writes to the subscribers that were idle itself, as a publishing thread does
 * in single-node mode. The count of queued messages includes some that reach no consumer: flow control, which jnats
 * answers itself, messages an ordered consumer drops when it recreates itself after a gap, and those still queued for
 * a consumer already replaced. An event held behind those only would wait for the next: the node's tick hands over
 * what is held ({@link #handOverHeld}), within 0.2 s unless the tick is waiting for JetStream.
 */
final class StreamFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StreamFeed.class);
    private static final long NO_HEARTBEAT_ALARM_MILLIS = Duration.ofDays(1).toMillis();
    /**
     * The most events held for one hand-over: beyond a few, a subscriber's write gains little, and the first of them
     * waits for the decoding of the others (a few microseconds each).
     */
    static final int MOST_HELD = 32;

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
    private final Held held = new Held();

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
         * not be followed by later ones, should the hub's scope come back to it. Written under {@link #held}.
         */
        volatile boolean refused;

        Consumer(Reading reading) {
            this.reading = reading;
        }

        void deliver(Message message) {
            // A subscription jnats registered for a making that then failed stays out, as do replaced ones.
            if (this != current && this != pending || refused) {
                handOverIfNothingQueued();
                return;
            }
            long id = message.metaData().streamSequence();
            IncomingEvent event;
            try {
                event = messages.decode(message.getHeaders(), message.getData());
            } catch (IllegalArgumentException e) {
                // Someone else writes on the stream's subjects: passed by as an event of no subscriber's, so that
                // the hub's last id is not left behind the stream, counted, and said once. What is held goes first:
                // the hub ignores ids below its last.
                handOverHeld();
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
            hold(this, id, event);
        }

        void stop(Dispatcher from) {
            try {
                from.unsubscribe(subscription);
            } catch (RuntimeException e) {
                // already gone with the server it lived on; it delivers nothing more either way
            }
        }
    }

    /** Events read but not yet handed to the hub, all from one consumer; guarded by itself. */
    private static final class Held {
        Consumer from;
        final long[] ids = new long[MOST_HELD];
        final List<IncomingEvent> events = new ArrayList<>(MOST_HELD);
    }

    /** Holds {@code event} for the hub, and hands over what is held unless more messages are queued behind it. */
    private void hold(Consumer from, long id, IncomingEvent event) {
        Publication publication = Publication.queued();
        try {
            synchronized (held) {
                if (held.from != from) {
                    deliverHeld(publication);
                }
                if (from.refused) {
                    // Refused by the tick's hand-over since deliver() looked: the events it dropped must not be
                    // followed by this one, should the hub's scope come back to it (checked under the lock that
                    // refuses).
                    return;
                }
                held.from = from;
                held.ids[held.events.size()] = id;
                held.events.add(event);
                if (held.events.size() == MOST_HELD || nothingQueued()) {
                    deliverHeld(publication);
                }
            }
        } finally {
            publication.runDeferred();
        }
    }

    private void handOverIfNothingQueued() {
        if (nothingQueued()) {
            handOverHeld();
        }
    }

    /**
     * Whether no message waits for the dispatcher. jnats counts a message after queueing it, so one the dispatcher
     * took at once leaves the count at -1 for a moment: read as "one queued", an event alone waited for the next
     * (StreamFeedNatsTest).
     */
    private boolean nothingQueued() {
        return dispatcher.getPendingMessageCount() <= 0;
    }

    /**
     * Hands the hub the events held, then writes to those of their subscribers that were idle. Called by the
     * dispatcher thread, and by the node's tick for events held behind messages that reached no consumer.
     */
    void handOverHeld() {
        Publication publication = Publication.queued();
        try {
            synchronized (held) {
                deliverHeld(publication);
            }
        } finally {
            publication.runDeferred();
        }
    }

    /**
     * Hands the hub the events held, under {@link #held}'s lock: a hand-over on another thread must not overtake
     * this one with later ids. The writes they leave are in {@code publication}, for after the lock.
     */
    private void deliverHeld(Publication publication) {
        if (held.events.isEmpty()) {
            return;
        }
        try {
            if (!hub.deliver(held.from.reading.scope(), held.ids, held.events, publication)) {
                held.from.refused = true;
            }
        } finally {
            held.events.clear();
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

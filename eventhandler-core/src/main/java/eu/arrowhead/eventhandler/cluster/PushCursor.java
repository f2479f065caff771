package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.push.FailedPost;
import eu.arrowhead.eventhandler.push.PushDelivery;
import eu.arrowhead.eventhandler.push.PushRules;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import io.nats.client.ConsumeOptions;
import io.nats.client.ConsumerContext;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.MessageConsumer;
import io.nats.client.StreamContext;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode's delivery of one push subscription: a durable JetStream consumer of its topic's subject, the
 * subscription's cursor in the stream, shared by every node. Every node pulls from it, and the consumer lets one
 * event at a time be in flight ({@code max_ack_pending} 1), so whichever node gets it, the subscriber receives
 * its events one after another, in id order.
 *
 * <p>The event is acknowledged once the subscriber answered its POST with 2xx (or it does not pass the
 * subscription's rules). A failed POST is handed back to the stream with a delay that doubles from
 * {@code push.retry-initial-millis} to {@code push.retry-max-millis}, for as long as it takes: a subscriber
 * that is down misses nothing the stream still holds, and its queue is the stream, not a node's memory. If the
 * node delivering it dies, the stream gives the event to another node once its acknowledgement wait
 * (the POST's connect and response timeouts plus 5 s) has passed. Delivery is at least once: a subscriber
 * whose 2xx was lost with its node gets that event again. An event the cursor gives out again although a node
 * acknowledged it (nats-server 2.9 does, around a change of the cursor's leader) is not sent again if it comes to
 * a node that acknowledged it or a later event; another node sends it again.
 *
 * <p>An event its subscriber refuses for good ({@link FailedPost#permanent}) when the stream has delivered it more
 * than {@code push.poison-retries} times is set aside on the subscription's dead-letter list that every node shares
 * ({@link SharedDeadLetters}), and then acknowledged: the cursor goes on. The stream's delivery count is the count
 * of tries, kept by the stream whichever node made them; it counts failures of every kind, so an event that failed
 * with 5xx or no answer before its first refusal is set aside at that refusal already (redeliverable all the same).
 */
final class PushCursor implements PushDelivery {
    private static final Logger LOG = LoggerFactory.getLogger(PushCursor.class);

    /**
     * A pull asks for several events although the cursor lets only one be in flight: the stream then hands each
     * next event to an open pull as soon as the last is acknowledged. (A pull of one is answered with one event,
     * and the client asks again only when the pull expires.) It expires after {@link #PULL_EXPIRY}, not the client's
     * 30 s: a pull open when the subscription pauses takes events until then, each handed back unsent.
     */
    private static final Duration PULL_EXPIRY = Duration.ofSeconds(5);
    /** Status answers to pulls (a leadership change, say) are logged at DEBUG ({@link ClusterConnection}). */
    private static final ConsumeOptions PULL = ConsumeOptions.builder().batchSize(64)
            .expiresIn(PULL_EXPIRY.toMillis()).raiseStatusWarnings().build();

    private final long subscriptionId;
    private final String name;
    private final StreamContext stream;
    private final Dispatcher dispatcher;
    private final StreamMessages messages;
    private final PushSender sender;
    private final PushConfig config;
    private final SharedDeadLetters letters;
    private final FreezeWatch freeze;
    private final ConfirmedAck acks;
    private volatile PushRules rules;
    /** Guarded by this. */
    private String topicKey;
    /** The durable consumer while it follows a topic; guarded by this. */
    private ConsumerContext cursor;
    /** Its pulls, while it follows a topic and is not paused; guarded by this. */
    private MessageConsumer consumer;
    /** Why the subscription is paused, or {@code null}; written under this, read by the deliveries without it. */
    private volatile String pausedBecause;
    /** Set once the subscription is gone. */
    private volatile boolean closed;
    /**
     * The acknowledgement subject of the last event this node acknowledged, or {@code null}: {@link #acknowledgeAgain}
     * sends it again. The subject, not the message: a message would hold its event's bytes for every subscription.
     */
    private volatile String lastAcknowledged;
    /** When (nanos) it was acknowledged. */
    private volatile long lastAcknowledgedNanos;
    /**
     * The newest event this node acknowledged: every event of the cursor before it reached the subscriber (or was
     * set aside), since the cursor gives out none before the one ahead of it is acknowledged.
     */
    private final AtomicReference<Acknowledged> newestAcknowledged = new AtomicReference<>(Acknowledged.NONE);

    /**
     * @param dispatcher the thread every cursor of this node hands its events on: short work, since the POST is
     *                   asynchronous
     */
    PushCursor(long subscriptionId, StreamContext stream, Dispatcher dispatcher, StreamMessages messages,
               PushSender sender, PushConfig config, SharedDeadLetters letters, PushRules rules,
               FreezeWatch freeze, ConfirmedAck acks) {
        this.subscriptionId = subscriptionId;
        this.name = "eventhandler-push-" + subscriptionId;
        this.stream = stream;
        this.dispatcher = dispatcher;
        this.messages = messages;
        this.sender = sender;
        this.config = config;
        this.letters = letters;
        this.rules = rules;
        this.freeze = freeze;
        this.acks = acks;
    }

    long subscriptionId() {
        return subscriptionId;
    }

    /** What the subscriber receives and where, now. */
    PushRules currentRules() {
        return rules;
    }

    /**
     * Creates the cursor (at the stream's end: a subscription receives what is published after it) or finds the
     * one another node created, and starts pulling from it unless the subscription is paused. A subscription that
     * moved to another topic gets a new cursor.
     */
    @Override
    public synchronized void follow(String topic) {
        try {
            stopPulling();
            if (topicKey != null && !topicKey.equals(topic)) {
                deleteCursor();
            }
            topicKey = topic;
            cursor = stream.createOrUpdateConsumer(configuration(topic));
            pullUnlessPaused();
        } catch (IOException | JetStreamApiException e) {
            throw new UnavailableException("the push subscription's cursor in the cluster's stream cannot be set up"
                    + " now (" + e.getMessage() + "); try again");
        }
    }

    /** Under this. */
    private void pullUnlessPaused() throws IOException, JetStreamApiException {
        if (pausedBecause == null) {
            consumer = cursor.consume(PULL, dispatcher, this::deliver);
        }
    }

    /**
     * The subscription was paused (why) or resumed ({@code null}), on any node ({@link SharedPauses}): this node
     * stops pulling, or pulls again. A POST under way ends as it would.
     */
    synchronized void paused(String why) {
        pausedBecause = why;
        if (why != null) {
            stopPulling();
            return;
        }
        if (cursor == null || consumer != null) {
            return;
        }
        try {
            pullUnlessPaused();
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            LOG.warn("push subscription {} was resumed, but this node cannot pull from its cursor now ({}); it tries"
                    + " again within a second once an event is waiting, and the other nodes deliver meanwhile",
                    subscriptionId, e.toString());
        }
    }

    /** As this node knows the cluster's pause, which its pulls follow on the letters' thread. */
    @Override
    public String pausedBecause() {
        return letters.pauseReason(subscriptionId);
    }

    /**
     * Pulls afresh, if it follows a topic and is not paused. A pull lives on the NATS server that leads the cursor:
     * when that server dies, or this node's connection moves, the pull is gone without a word, and the client library
     * would ask again only at its heartbeat alarm ({@link CursorWatch}). The old pull is stopped, not closed: an event
     * the cursor handed to it may be on its way or queued here, and a closed subscription would drop it unsent and
     * unacknowledged, holding the cursor for its acknowledgement wait. A stopped one takes what comes, asks for no
     * more, and ends with its pull.
     */
    synchronized void pullAgain() {
        if (!shouldPull()) {
            return;
        }
        if (consumer != null) {
            consumer.stop();
            consumer = null;
        }
        try {
            pullUnlessPaused();
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            // A closing connection; CursorWatch tries again within a second once an event is waiting.
            LOG.debug("push subscription {} cannot pull from its cursor yet: {}", subscriptionId, e.toString());
        }
    }

    /**
     * The cursor's leader has moved: acknowledges again the last event this node acknowledged, if that was within
     * the acknowledgement wait. A leader answers an acknowledgement once it has applied it, before its followers
     * have it (nats-server 2.9): a leader that dies then leaves the next one holding the event as in flight, and it
     * sends the event again once the wait has passed, to a subscriber that had it (seen in
     * ClusterConsumerRecoveryIT). Acknowledging an event the cursor no longer holds changes nothing.
     */
    void acknowledgeAgain() {
        String last = lastAcknowledged;
        if (last != null && acknowledgedLately()) {
            acks.ack(last);
        }
    }

    /** Whether this node acknowledged an event of this cursor less than an acknowledgement wait ago. */
    boolean acknowledgedLately() {
        return lastAcknowledged != null && System.nanoTime() - lastAcknowledgedNanos < ackWait(config).toNanos();
    }

    private void acknowledge(Message message) {
        newestAcknowledged.accumulateAndGet(Acknowledged.of(message), Acknowledged::newer);
        lastAcknowledgedNanos = System.nanoTime();
        lastAcknowledged = message.getReplyTo();
        acks.ack(lastAcknowledged);
    }

    /** The durable consumer's name in the stream. */
    String name() {
        return name;
    }

    /** Whether the subscription is gone. */
    boolean closed() {
        return closed;
    }

    /** Whether this node pulls from the cursor now. */
    synchronized boolean pulling() {
        return consumer != null;
    }

    /** Whether this node should pull from the cursor: it follows a topic and is not paused. */
    synchronized boolean shouldPull() {
        return cursor != null && pausedBecause == null;
    }

    /** The topic it follows now, or {@code null}. */
    synchronized String topic() {
        return topicKey;
    }

    /** How long the stream waits for a node's acknowledgement before it gives the event to another node. */
    static Duration ackWait(PushConfig config) {
        return config.connectTimeout().plus(config.responseTimeout()).plusSeconds(5);
    }

    private ConsumerConfiguration configuration(String topic) {
        Duration ackWait = ackWait(config);
        return ConsumerConfiguration.builder()
                .durable(name)
                .filterSubject(messages.subject(topic))
                .deliverPolicy(DeliverPolicy.New)
                .ackPolicy(AckPolicy.Explicit)
                .maxAckPending(1)
                .ackWait(ackWait)
                .build();
    }

    @Override
    public synchronized void unfollow(String topic) {
        if (topic.equals(topicKey)) {
            stopPulling();
            cursor = null;
        }
    }

    @Override
    public void rules(PushRules changed) {
        rules = changed;
    }

    @Override
    public int queued() {
        return 0;
    }

    /** The subscription is gone: its cursor and its dead letters go too (whichever node deletes them first). */
    @Override
    public synchronized void close() {
        closed = true;
        stopPulling();
        cursor = null;
        topicKey = null;
        deleteCursor();
        letters.forget(subscriptionId, this);
    }

    private void stopPulling() {
        if (consumer != null) {
            consumer.stop();
            consumer = null;
        }
    }

    private void deleteCursor() {
        try {
            stream.deleteConsumer(name);
        } catch (IOException | JetStreamApiException e) {
            LOG.debug("push cursor {} not deleted: {}", name, e.getMessage());
        }
    }

    private void deliver(Message message) {
        long id = message.metaData().streamSequence();
        if (newestAcknowledged.get().covers(message)) {
            // The subscriber had it: with one event in flight, in id order, the cursor gives none out before the
            // one ahead of it is acknowledged. nats-server 2.9 gives one out again around a change of the cursor's
            // leader, its old leader having confirmed the acknowledgement but not passed it on to the new one.
            // Acknowledged again, but not as this node's last acknowledgement, which a move of the leader repeats.
            LOG.debug("event {} of push cursor {} given out again after this node acknowledged it or a later one;"
                    + " acknowledged, not sent", id, name);
            acks.ack(message.getReplyTo());
            return;
        }
        if (pausedBecause != null) {
            // A pull open when it paused still takes events until it expires: each is handed back, not sent, and
            // offered again no sooner than the pull has expired, so that each comes to it once (its delivery count,
            // its tries, raised once), until the subscription resumes.
            Duration later = config.retryMaxBackoff();
            message.nakWithDelay(later.compareTo(PULL_EXPIRY) < 0 ? PULL_EXPIRY : later);
            return;
        }
        IncomingEvent event;
        try {
            event = messages.decode(message.getHeaders(), message.getData());
        } catch (IllegalArgumentException e) {
            acknowledge(message);
            return;
        }
        if (freeze.justFrozen() && perhapsGivenToAnother(message)) {
            LOG.debug("event {} waited through a freeze of this node, and the stream may have given it to another"
                    + " node since; not sent from here", id);
            return; // neither acknowledged nor handed back: the other node's now, or the cursor's again
        }
        PushRules current = rules;
        if (!current.passes(PublishedEvent.logged(id, event))) {
            acknowledge(message);
            return;
        }
        sender.postOnce(current.target(), EventEncoding.pushed(event.json()),
                why -> answered(message, id, event.eventType(), why));
    }

    /**
     * Whether the cursor may have delivered anything after this message: it was given to another node (its
     * acknowledgement wait passed while this node stood still), or taken already. One question to the cursor's
     * leader, asked only after a freeze. Unanswered (the cursor has no leader now), it counts as given: the event
     * stays unacknowledged, so the cursor gives it out again once its acknowledgement wait has passed, counted from
     * before the freeze, to this node or another. Sending it instead pushed it twice whenever another node had
     * it already (seen: a node woke as the cursor's leader froze, and sent the event 5 s after another node had).
     */
    private boolean perhapsGivenToAnother(Message message) {
        try {
            return stream.getConsumerInfo(name).getDelivered().getConsumerSequence()
                    > message.metaData().consumerSequence();
        } catch (IOException | JetStreamApiException e) {
            return true;
        }
    }

    /** On an I/O thread: the event is taken, set aside, or handed back to the stream for a later try. */
    private void answered(Message message, long id, String eventType, FailedPost why) {
        if (why == null) {
            acknowledge(message);
            return;
        }
        long tries = message.metaData().deliveredCount();
        Runnable later = () -> message.nakWithDelay(config.backoff(tries - 1));
        if (why.permanent() && tries > config.poisonRetries()) {
            letters.setAside(this, id, eventType, why, tries, () -> acknowledge(message), later);
            return;
        }
        LOG.debug("POST of event {} to {} failed ({}); attempt {}, the stream sends it again", id, rules.target(),
                why, tries);
        later.run();
    }

    /**
     * An event acknowledged: its id, and when the stream stored it. The time keeps a stream deleted and made again
     * (its ids from 1 again, its events stored later) from passing for events the subscriber had. Within one stream,
     * leaders whose clocks differ can only make a node send an event again, never skip one.
     */
    private record Acknowledged(long id, Instant storedAt) {
        static final Acknowledged NONE = new Acknowledged(0, Instant.MIN);

        static Acknowledged of(Message message) {
            return new Acknowledged(message.metaData().streamSequence(), message.metaData().timestamp().toInstant());
        }

        Acknowledged newer(Acknowledged other) {
            return other.id > id ? other : this;
        }

        /** Whether {@code message} was stored no later than this event, and at or before its id. */
        boolean covers(Message message) {
            return message.metaData().streamSequence() <= id
                    && !message.metaData().timestamp().toInstant().isAfter(storedAt);
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.cluster.StandInJetStream.Consumer;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import io.nats.client.Message;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The feed from the cluster's stream into a node's hub, against a stand-in of the NATS client
 * ({@link StandInJetStream}): the test plays the stream's messages to the feed's consumers itself, including to a
 * consumer the feed has replaced, and holds one in the middle of its delivery while the feed restarts.
 */
class StreamFeedTest {
    private final StreamMessages messages = new StreamMessages("eh.events");
    private final Hub hub = new Hub(10, 1_000, 1 << 20, 1 << 22, new StreamFedLog());
    private final RecordingSubscriber subscriber = new RecordingSubscriber();
    private final StandInJetStream nats = new StandInJetStream();
    private final ExecutorService dispatcherThread = Executors.newSingleThreadExecutor();
    private StreamFeed feed;

    StreamFeedTest() {
        hub.subscribe(Set.of("a", "b"), subscriber, OptionalLong.empty());
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (feed != null) {
            feed.close();
            assertFalse(nats.dispatcherActive(), "closing the feed closes its dispatcher");
        }
        dispatcherThread.shutdownNow();
        assertTrue(dispatcherThread.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** Every message reaches the hub in sequence order, its sequence its id, its event as it was written. */
    @Test
    void everyEventReachesTheHubWithItsSequenceAsItsId() throws Exception {
        Consumer consumer = started();
        assertTrue(consumer.options.isOrdered(), "an ordered consumer: no acknowledgements, recreated on a gap");
        assertEquals(DeliverPolicy.ByStartSequence, consumer.options.getConsumerConfiguration().getDeliverPolicy());
        assertEquals(1, consumer.startSequence());

        deliver(consumer, 1, 20);

        assertEquals(ids(1, 20), subscriber.ids());
        PublishedEvent seventh = subscriber.offered().get(6);
        String frame = new String(seventh.frame(), StandardCharsets.UTF_8);
        assertTrue(frame.startsWith("id: 7\nevent: a\ndata: {\"id\":7,\"eventType\":\"a\",\"payload\":\"event-7\""),
                frame);
    }

    /** A message someone else wrote on the stream's subjects is skipped and counted; the events around it go on. */
    @Test
    void aMessageTheEventHandlerDidNotWriteIsSkippedAndCounted() throws Exception {
        Consumer consumer = started();
        consumer.deliver(message(1));
        consumer.deliver(StandInJetStream.foreign(2));
        consumer.deliver(StandInJetStream.foreign(3));
        consumer.deliver(message(4));

        assertEquals(List.of(1L, 4L), subscriber.ids());
        assertEquals(2, feed.unreadable());
    }

    /** Events read while more messages are queued are held, and reach the hub together once none is. */
    @Test
    void eventsReadWhileMoreAreQueuedReachTheHubTogether() throws Exception {
        Consumer consumer = started();
        nats.queued(2);
        consumer.deliver(message(1));
        nats.queued(1);
        consumer.deliver(message(2));
        assertEquals(List.of(), subscriber.ids(), "held while more are queued");
        assertEquals(0, hub.lastId());

        nats.queued(0);
        consumer.deliver(message(3));
        assertEquals(ids(1, 3), subscriber.ids());
    }

    /** However many are queued, no more than {@link StreamFeed#MOST_HELD} events wait for the hub. */
    @Test
    void aLongQueueIsHandedOverInBatchesOfAtMostMostHeld() throws Exception {
        Consumer consumer = started();
        nats.queued(1_000);
        deliver(consumer, 1, StreamFeed.MOST_HELD + 1);
        assertEquals(ids(1, StreamFeed.MOST_HELD), subscriber.ids());
    }

    /**
     * jnats counts messages that reach no consumer (flow control it answers itself) among those queued: an event
     * held behind only those is handed over by the node's tick.
     */
    @Test
    void anEventHeldBehindMessagesThatReachNoConsumerIsHandedOverByTheTick() throws Exception {
        Consumer consumer = started();
        nats.queued(1);
        consumer.deliver(message(1));
        assertEquals(List.of(), subscriber.ids());

        feed.handOverHeld();
        assertEquals(List.of(1L), subscriber.ids());
    }

    /** Held events reach the hub before a message that is not an event moves its last id past them. */
    @Test
    void heldEventsGoBeforeAnUnreadableMessageIsSkipped() throws Exception {
        Consumer consumer = started();
        nats.queued(5);
        consumer.deliver(message(1));
        consumer.deliver(message(2));
        consumer.deliver(StandInJetStream.foreign(3));
        nats.queued(0);
        consumer.deliver(message(4));
        assertEquals(List.of(1L, 2L, 4L), subscriber.ids());
    }

    /**
     * A restart replaces the consumer with one that starts after the hub's last id, and unsubscribes the old one;
     * messages of the old one still on their way deliver nothing, and ids the new one hands over again are ignored.
     */
    @Test
    void aRestartedFeedGoesOnAfterTheHubsLastIdAndTheReplacedConsumerDeliversNothing() throws Exception {
        Consumer first = startedWith(10);

        feed.restart(nats.jetStream);

        List<Consumer> consumers = nats.consumers();
        assertEquals(2, consumers.size());
        assertTrue(first.unsubscribed, "the replaced consumer is unsubscribed from the dispatcher");
        Consumer second = consumers.get(1);
        assertEquals(11, second.startSequence());
        first.deliver(message(11));
        first.deliver(message(12));
        assertEquals(ids(1, 10), subscriber.ids(), "the replaced consumer delivers nothing more");
        deliver(second, 9, 15);
        assertEquals(ids(1, 15), subscriber.ids());
    }

    /**
     * Events a consumer read while more were queued reach the hub before those of the consumer that replaced it,
     * which starts after the hub's last id and so hands them again: each once, in order.
     */
    @Test
    void eventsHeldFromAReplacedConsumerGoFirstAndItsSuccessorsRepeatsAreIgnored() throws Exception {
        Consumer first = startedWith(3);
        nats.queued(10);
        deliver(first, 4, 6);
        assertEquals(ids(1, 3), subscriber.ids());

        feed.restart(nats.jetStream);
        Consumer second = nats.consumers().get(1);
        assertEquals(4, second.startSequence(), "after the hub's last id: the held events are not the hub's yet");
        nats.queued(0);
        deliver(second, 4, 8);
        assertEquals(ids(1, 8), subscriber.ids());
    }

    /**
     * A restart whose try goes unanswered (JetStream placed its consumer on a frozen server) leaves the consumer
     * that works delivering; the next try replaces it.
     */
    @Test
    void aRestartThatFailsLeavesTheConsumerThatWorksDelivering() throws Exception {
        Consumer first = startedWith(5);

        nats.leaveNextSubscribeUnanswered();
        assertThrows(IOException.class, () -> feed.restart(nats.jetStream));
        assertFalse(first.unsubscribed, "the consumer that works is kept");
        deliver(first, 6, 8);
        assertEquals(ids(1, 8), subscriber.ids());

        assertEquals(8, feed.restart(nats.jetStream));
        Consumer second = only(nats.consumers().subList(1, nats.consumers().size()));
        assertEquals(9, second.startSequence());
        assertTrue(first.unsubscribed, "replaced once the new one is made");
    }

    /**
     * jnats registers a subscription before it asks for the consumer, and a runtime failure of the asking (a closed
     * connection) leaves it registered: should it ever deliver, nothing reaches the hub from it.
     */
    @Test
    void aSubscriptionLeftByAFailedRestartDeliversNothing() throws Exception {
        Consumer first = startedWith(3);

        nats.failNextSubscribeAfterRegistering();
        assertThrows(IllegalStateException.class, () -> feed.restart(nats.jetStream));
        Consumer orphan = nats.consumers().get(1);
        deliver(orphan, 4, 6);
        assertEquals(ids(1, 3), subscriber.ids(), "the orphan delivers nothing");
        deliver(first, 4, 6);
        assertEquals(ids(1, 6), subscriber.ids());
    }

    /**
     * While a restart is being made the old consumer and the new one both deliver, each in order, the old one
     * ahead: every event reaches the subscriber once, and a message that is not an event is counted once.
     */
    @Test
    void twoConsumersDeliveringTogetherHandEachEventOnce() throws Exception {
        Consumer first = startedWith(4);
        nats.onNextSubscribe(second -> {
            first.deliver(message(5));
            first.deliver(StandInJetStream.foreign(6));
            first.deliver(message(7));
            second.deliver(message(5));
            second.deliver(StandInJetStream.foreign(6));
            second.deliver(message(7));
            second.deliver(message(8));
            first.deliver(message(8));
            first.deliver(message(9));
        });

        assertEquals(4, feed.restart(nats.jetStream));
        Consumer second = nats.consumers().get(1);
        first.deliver(message(10));
        second.deliver(message(9));
        second.deliver(message(10));

        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 7L, 8L, 9L, 10L), subscriber.ids());
        assertEquals(1, feed.unreadable());
        assertTrue(first.unsubscribed);
    }

    /**
     * The feed restarts while its consumer is in the middle of a delivery, past the check that it may deliver: the new consumer starts from the hub's last id before that delivery, so the event comes twice from the
     * stream, and reaches the subscriber once.
     */
    @Test
    void aRestartDuringADeliveryLosesAndRepeatsNothing() throws Exception {
        Consumer first = startedWith(5);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        Future<?> held = dispatcherThread.submit(() -> {
            first.deliver(StandInJetStream.message(6, written(6), holding, letGo));
            return null;
        });
        assertTrue(holding.await(10, TimeUnit.SECONDS), "the delivery of 6 is under way");

        feed.restart(nats.jetStream);
        Consumer second = nats.consumers().get(1);
        assertEquals(6, second.startSequence(), "6 was not delivered yet when the feed restarted");
        letGo.countDown();
        held.get(10, TimeUnit.SECONDS);
        dispatcherThread.submit(() -> {
            deliver(second, 6, 9);
            return null;
        }).get(10, TimeUnit.SECONDS);

        assertEquals(ids(1, 9), subscriber.ids());
    }

    /**
     * When the hub reads only the topic its subscriber wants, the restarted feed's consumer reads only that topic's
     * subject, after the hub's last id; the consumer of the wider scope goes on delivering that topic's events until
     * it is replaced.
     */
    /**
     * A narrower consumer whose held events the hub refuses at the tick's hand-over (a subscriber to another type
     * widened the hub's scope meanwhile) has nothing more taken, even once the hub's scope comes back to it: taken,
     * a later event would leave the refused ones behind the hub's last id. The restart reads them again.
     */
    @Test
    void aConsumerRefusedAtAHandOverHasNothingMoreTakenWhenTheScopeComesBack() throws Exception {
        hub.unsubscribe(Set.of("a", "b"), subscriber);
        RecordingSubscriber onlyA = new RecordingSubscriber();
        hub.subscribe(Set.of("a"), onlyA, OptionalLong.empty());
        startedWith(2);
        hub.narrowReads(Set.of("a"));
        feed.restart(nats.jetStream);
        Consumer narrow = nats.consumers().get(1);
        nats.queued(5);
        narrow.deliver(message(4));
        narrow.deliver(message(5));

        RecordingSubscriber onB = new RecordingSubscriber();
        hub.subscribe(Set.of("b"), onB, OptionalLong.empty());
        feed.handOverHeld();
        hub.unsubscribe(Set.of("b"), onB);
        assertEquals(Set.of("a"), hub.narrowReads(Set.of("a")).topicKeys());
        nats.queued(0);
        narrow.deliver(message(7));

        assertEquals(List.of(1L, 2L), onlyA.ids());
        assertEquals(2, hub.lastId());
    }

    @Test
    void aFeedRestartedForANarrowerScopeReadsOnlyItsSubject() throws Exception {
        hub.unsubscribe(Set.of("a", "b"), subscriber);
        RecordingSubscriber onlyA = new RecordingSubscriber();
        hub.subscribe(Set.of("a"), onlyA, OptionalLong.empty());
        Consumer first = startedWith(4);
        assertEquals("eh.events.>", first.subject);
        assertTrue(feed.readsHubScope());

        assertEquals(Set.of("a"), hub.narrowReads(Set.of("a")).topicKeys());
        assertFalse(feed.readsHubScope(), "the feed must be restarted");
        deliver(first, 5, 6);
        assertEquals(List.of(1L, 2L, 4L, 5L), onlyA.ids(), "the wider consumer goes on until it is replaced");

        assertEquals(6, feed.restart(nats.jetStream));
        Consumer second = nats.consumers().get(1);
        assertEquals("eh.events.a", second.subject);
        assertEquals(7, second.startSequence());
        assertTrue(feed.readsHubScope());
        second.deliver(message(7));
        second.deliver(message(8));
        second.deliver(message(10));
        assertEquals(List.of(1L, 2L, 4L, 5L, 7L, 8L, 10L), onlyA.ids(), "ids skip the other topic's events");
        assertEquals("a", feed.reading().scope().topicKeys().iterator().next());
        assertTrue(feed.reading().filtered());
    }

    /** Starts the feed and plays its consumer the stream's messages 1 to {@code last}; returns the consumer. */
    private Consumer startedWith(long last) throws Exception {
        Consumer first = started();
        deliver(first, 1, last);
        return first;
    }

    /** Starts the feed; returns its consumer. */
    private Consumer started() throws IOException {
        feed = StreamFeed.start(nats.connection, nats.jetStream, "events", messages, hub);
        return only(nats.consumers());
    }

    /** Plays the stream's messages {@code from} to {@code to} to {@code consumer}, in order. */
    private void deliver(Consumer consumer, long from, long to) throws InterruptedException {
        for (long sequence = from; sequence <= to; sequence++) {
            consumer.deliver(message(sequence));
        }
    }

    /** The message the stream holds at {@code sequence}: an event of type a, or b every third. */
    private Message message(long sequence) {
        return StandInJetStream.message(sequence, written(sequence));
    }

    private Message written(long sequence) {
        return messages.encode(SampleEvents.incoming(sequence % 3 == 0 ? "b" : "a", "event-" + sequence), null, 0);
    }

    private static Consumer only(List<Consumer> consumers) {
        assertEquals(1, consumers.size());
        return consumers.get(0);
    }

    private static List<Long> ids(long first, long last) {
        return LongStream.rangeClosed(first, last).boxed().toList();
    }
}

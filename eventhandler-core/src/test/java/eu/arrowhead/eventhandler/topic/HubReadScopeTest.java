package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A cluster node's hub reads a narrower part of the stream while its subscribers want one topic: the hub holds only
 * topics its scope covers, takes events only from a feed whose scope covers its own, and a subscriber to a topic the
 * feed did not read widens the scope before the topic is made, with its window starting there.
 */
class HubReadScopeTest {
    private final Hub hub = new Hub(10, 100, 1 << 20, 1 << 22, new StreamFedLog());
    private final RecordingSubscriber onlyA = new RecordingSubscriber();
    private final AtomicInteger looks = new AtomicInteger();

    HubReadScopeTest() {
        hub.whenFeedShouldLook(looks::incrementAndGet);
        hub.subscribe(Set.of("a"), onlyA, OptionalLong.empty());
    }

    private static List<IncomingEvent> event(String type) {
        return List.of(SampleEvents.incoming(type, "p"));
    }

    @Test
    void narrowingRemovesTheOtherTopicsWhileTheWiderFeedGoesOnUntilReplaced() {
        ReadScope every = hub.readScope();
        assertTrue(every.readsEveryTopic());
        assertTrue(hub.deliver(every, new long[] {1}, event("b"), Publication.NONE));
        assertEquals(Set.of("a", "b"), topics());

        ReadScope onlyItsTopic = hub.narrowReads(Set.of("a"));
        assertEquals(Set.of("a"), onlyItsTopic.topicKeys());
        assertEquals(Set.of("a"), topics(), "a topic the feed no longer reads is not kept");
        assertTrue(hub.deliver(every, new long[] {2}, event("b"), Publication.NONE), "the wider feed goes on");
        assertEquals(Set.of("a"), topics(), "an event of a topic the scope leaves out makes none");
        assertEquals(2, hub.lastId());
        assertTrue(hub.deliver(every, new long[] {3}, event("a"), Publication.NONE));
        assertTrue(hub.deliver(onlyItsTopic, new long[] {3}, event("a"), Publication.NONE), "given twice, taken once");
        assertTrue(hub.deliver(onlyItsTopic, new long[] {5}, event("a"), Publication.NONE));
        assertFalse(hub.deliver(new ReadScope(Set.of()), new long[] {6}, event("a"), Publication.NONE),
                "a feed that does not read a is ignored");
        assertEquals(List.of(3L, 5L), onlyA.ids());
        assertEquals(0, looks.get());
    }

    @Test
    void aFeedHandsSeveralEventsAtOnceWithTheIdsTheyHaveInTheStream() {
        ReadScope onlyItsTopic = hub.narrowReads(Set.of("a"));
        List<IncomingEvent> three = List.of(SampleEvents.incoming("a", "p"), SampleEvents.incoming("a", "q"),
                SampleEvents.incoming("a", "r"));
        long[] ids = {4, 9, 12, 0}; // longer than the events: a feed reuses its array
        assertTrue(hub.deliver(onlyItsTopic, ids, three, Publication.NONE));
        assertEquals(List.of(4L, 9L, 12L), onlyA.ids());
        assertEquals(12, hub.lastId());
        assertTrue(hub.deliver(onlyItsTopic, new long[] {9, 13}, List.of(SampleEvents.incoming("a", "q"),
                SampleEvents.incoming("a", "s")), Publication.NONE));
        assertEquals(List.of(4L, 9L, 12L, 13L), onlyA.ids(), "an id delivered before is not delivered again");
    }

    @Test
    void aTopicWithASubscriberIsNeverNarrowedAway() {
        RecordingSubscriber onB = new RecordingSubscriber();
        hub.subscribe(Set.of("b"), onB, OptionalLong.empty());
        assertNull(hub.narrowReads(Set.of("a")));
        assertTrue(hub.readScope().readsEveryTopic());
    }

    @Test
    void aSubscriberToATopicTheFeedDidNotReadWidensTheScopeAndIsServedFromTheLogBeforeIt() {
        ReadScope onlyItsTopic = hub.narrowReads(Set.of("a"));
        hub.deliver(onlyItsTopic, new long[] {7}, event("a"), Publication.NONE);

        RecordingSubscriber onB = new RecordingSubscriber();
        Replay replay = hub.subscribe(Set.of("b"), onB, OptionalLong.of(3));

        assertEquals(1, looks.get(), "the feed is told to read the wider scope at once");
        ReadScope widened = hub.readScope();
        assertTrue(widened.readsEveryTopic(), "two topics are more than one subject names");
        // A log that replays serves (3, 7] (StreamEventLog reads the stream); this one tells the subscriber of the gap.
        assertEquals(new ReplayGap(3, 7), replay.gap(), "events of b up to the last id delivered were never read here");
        assertFalse(hub.deliver(onlyItsTopic, new long[] {8}, event("a"), Publication.NONE),
                "the narrower feed is ignored");
        assertTrue(hub.deliver(widened, new long[] {8}, event("b"), Publication.NONE));
        assertEquals(List.of(8L), onB.ids());
    }

    /**
     * A first subscriber to a topic the feed did not read takes as old news what the stream held at the feed's last
     * look: the feed reads the topic from the last id delivered, which a narrower feed leaves behind the stream.
     */
    @Test
    void aFirstSubscriberToATopicTheFeedDidNotReadIsLiveFromTheStreamsLastKnownId() {
        ReadScope onlyItsTopic = hub.narrowReads(Set.of("a"));
        hub.deliver(onlyItsTopic, new long[] {10}, event("a"), Publication.NONE);
        hub.streamReached(40);

        RecordingSubscriber onB = new RecordingSubscriber();
        Replay replay = hub.subscribe(Set.of("b"), onB, OptionalLong.empty());
        assertEquals(40, replay.liveAfterId(), "its opening notice names the stream's last known id");
        ReadScope every = hub.readScope();
        hub.deliver(every, new long[] {30}, event("b"), Publication.NONE);
        hub.deliver(every, new long[] {41}, event("b"), Publication.NONE);
        assertEquals(List.of(41L), onB.ids(), "30 was published before it came");
    }

    @Test
    void aNarrowerFeedSkipsAheadOnlyInItsOwnScope() {
        ReadScope onlyItsTopic = hub.narrowReads(Set.of("a"));
        hub.skipTo(new ReadScope(Set.of("b")), 50);
        assertEquals(0, hub.lastId(), "a skip of a feed that does not read a is ignored");
        hub.skipTo(onlyItsTopic, 50);
        assertEquals(50, hub.lastId());

        RecordingSubscriber resuming = new RecordingSubscriber();
        UnavailableException early = assertThrows(UnavailableException.class,
                () -> hub.subscribe(Set.of("a"), resuming, OptionalLong.of(60)));
        assertTrue(early.getMessage().contains("try again"), early.getMessage());
        assertEquals(1, looks.get(), "the narrower feed is asked to look now");
    }

    /**
     * A resume from an id the stream holds but a narrower feed has not reached (another node delivered it) is
     * served at once: the subscriber takes only what comes after its resume point.
     */
    @Test
    void aResumeAheadOfANarrowerFeedIsServedAtOnceWithWhatFollowsIt() {
        ReadScope onlyItsTopic = hub.narrowReads(Set.of("a"));
        hub.deliver(onlyItsTopic, new long[] {10}, event("a"), Publication.NONE);
        hub.streamReached(30);

        RecordingSubscriber resuming = new RecordingSubscriber();
        Replay replay = hub.subscribe(Set.of("a"), resuming, OptionalLong.of(20));
        assertTrue(replay.events().isEmpty());
        assertNull(replay.gap());
        hub.deliver(onlyItsTopic, new long[] {20}, event("a"), Publication.NONE);
        hub.deliver(onlyItsTopic, new long[] {25}, event("a"), Publication.NONE);
        assertEquals(List.of(25L), resuming.ids(), "it had 20 already");
        assertEquals(0, looks.get());
    }

    private Set<String> topics() {
        return Set.copyOf(hub.stats().stream().map(TopicStats::eventType).toList());
    }
}

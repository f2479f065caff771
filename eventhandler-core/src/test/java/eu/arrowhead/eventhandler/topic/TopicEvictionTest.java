package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import eu.arrowhead.eventhandler.testing.WatchedJournal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, item 4: at {@code topic.max-count}, the least recently active topic without a subscriber gives way to
 * a new one, so invented event types cannot lock out real ones; subscribed topics and topics with an event still
 * being delivered never give way.
 */
class TopicEvictionTest {
    private final LocalHub local = new LocalHub(100, 10, 1 << 20, 1 << 24, new WatchedJournal());
    private final Hub hub = local.hub();

    private long publish(String type) {
        return local.publish(SampleEvents.batch(type, "x", 1), Publication.NONE);
    }

    private List<String> topics() {
        return hub.stats().stream().map(TopicStats::eventType).toList();
    }

    @Test
    void aFloodOfInventedTypesGivesWayToARealOneAndToASubscription() {
        RecordingSubscriber real = new RecordingSubscriber();
        hub.subscribe(Set.of("real"), real, OptionalLong.empty());
        for (int i = 0; i < 10_000; i++) {
            publish("junk-" + i);
        }
        assertEquals(100, topics().size());
        assertTrue(topics().contains("real"), "a subscribed topic never gives way");

        long id = publish("legitimate");
        assertTrue(topics().contains("legitimate"));
        RecordingSubscriber late = new RecordingSubscriber();
        hub.subscribe(Set.of("new-type"), late, OptionalLong.empty());
        long next = local.publish(SampleEvents.batch("new-type", "y", 1), Publication.NONE);
        assertEquals(List.of(next), late.ids());
        assertEquals(100, topics().size());
        assertEquals(10_000 - 99 + 2, hub.evictions());
        assertTrue(id > 0);
        // The oldest junk went first: the newest is still there.
        assertTrue(topics().contains("junk-9999") && !topics().contains("junk-0"));
    }

    @Test
    void aTopicWhoseSubscriberLeftBecomesTheNewestIdleOne() {
        RecordingSubscriber subscriber = new RecordingSubscriber();
        hub.subscribe(Set.of("left"), subscriber, OptionalLong.empty());
        for (int i = 0; i < 99; i++) {
            publish("junk-" + i);
        }
        hub.unsubscribe(Set.of("left"), subscriber);
        publish("new-1");
        assertTrue(topics().contains("left"), "it left after the junk was published: the junk goes first");
        assertTrue(!topics().contains("junk-0"));
    }

    @Test
    void whenEveryTopicIsSubscribedANewOneIsRefusedForNow() {
        RecordingSubscriber everywhere = new RecordingSubscriber();
        for (int i = 0; i < 100; i++) {
            hub.subscribe(Set.of("held-" + i), everywhere, OptionalLong.empty());
        }
        UnavailableException refused = assertThrows(UnavailableException.class, () -> publish("one-more"));
        assertTrue(refused.getMessage().contains("topic.max-count"), refused.getMessage());
        assertThrows(UnavailableException.class,
                () -> hub.subscribe(Set.of("one-more"), new RecordingSubscriber(), OptionalLong.empty()));
        assertEquals(0, hub.evictions());
    }

    @Test
    void aRequestDoesNotEvictItsOwnTopicsAndIsRefusedWholeIfTheRestCannotMakeRoom() {
        RecordingSubscriber everywhere = new RecordingSubscriber();
        for (int i = 0; i < 98; i++) {
            hub.subscribe(Set.of("held-" + i), everywhere, OptionalLong.empty());
        }
        publish("idle-a");
        publish("idle-b");
        // Needs one new topic and asks for both idle ones: neither may give way, so it is refused and nothing goes.
        assertThrows(UnavailableException.class, () -> hub.subscribe(Set.of("idle-a", "idle-b", "new"),
                new RecordingSubscriber(), OptionalLong.empty()));
        assertTrue(topics().containsAll(List.of("idle-a", "idle-b")));
        // Asking for one of them, the other gives way.
        hub.subscribe(Set.of("idle-a", "new"), new RecordingSubscriber(), OptionalLong.empty());
        assertTrue(topics().containsAll(List.of("idle-a", "new")) && !topics().contains("idle-b"));
    }

    @Test
    void aResumeOnATopicThatGaveWayIsToldOfTheGap() {
        long first = publish("evicted");
        for (int i = 0; i < 100; i++) {
            publish("junk-" + i);
        }
        assertTrue(!topics().contains("evicted"));
        Replay replay = hub.subscribe(Set.of("evicted"), new RecordingSubscriber(), OptionalLong.of(first - 1));
        // No store here: what the window held is told as a gap, never silently skipped.
        assertNotNull(replay.gap(), replay.toString());
        assertEquals(first - 1, replay.gap().requestedAfterId());
        assertTrue(replay.gap().resumedAfterId() >= first, replay.toString());
    }

    @Test
    void idleRemovalTakesTheOldestIdleTopicsOnly() {
        publish("a");
        hub.subscribe(Set.of("b"), new RecordingSubscriber(), OptionalLong.empty());
        assertEquals(1, hub.removeIdleTopics(Duration.ZERO));
        assertEquals(List.of("b"), topics());
    }

    /** A publish admitted and waiting for its commit holds its topic: no other type can take its place. */
    @Test
    void aTopicWithAnEventStillToDeliverDoesNotGiveWay() {
        Hub small = new Hub(1, 10, 1 << 20, 1 << 20, new StreamFedLog());
        small.admit(1, List.of(SampleEvents.incoming("pending", "x")));
        assertThrows(UnavailableException.class, () -> small.admit(2, List.of(SampleEvents.incoming("other", "x"))));
        small.deliver(1, List.of(SampleEvents.incoming("pending", "x")), Publication.NONE);
        small.admit(2, List.of(SampleEvents.incoming("other", "x")));
        assertEquals(List.of("other"), small.stats().stream().map(TopicStats::eventType).toList());
    }

    /**
     * A request whose new topics would need an idle topic with an event still to deliver is refused before any
     * topic gives way: an older idle topic, which could have, keeps its window.
     */
    @Test
    void aRefusedRequestEvictsNoTopic() {
        Hub small = new Hub(2, 10, 1 << 20, 1 << 20, new StreamFedLog());
        small.admit(1, List.of(SampleEvents.incoming("done", "x")));
        small.deliver(1, List.of(SampleEvents.incoming("done", "x")), Publication.NONE);
        small.admit(2, List.of(SampleEvents.incoming("pending", "x")));
        assertThrows(UnavailableException.class, () -> small.admit(3,
                List.of(SampleEvents.incoming("new-a", "x"), SampleEvents.incoming("new-b", "x"))));
        assertEquals(List.of("done", "pending"), small.stats().stream().map(TopicStats::eventType).toList());
        assertEquals(0, small.evictions());
    }

    /** Subscribers arriving while other threads flood new types: a subscribed topic is never evicted under them. */
    @Test
    void subscribersRacingAFloodKeepTheirTopics() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            CountDownLatch start = new CountDownLatch(1);
            Future<?> flood = pool.submit(() -> {
                start.await();
                for (int i = 0; i < 20_000; i++) {
                    try {
                        publish("junk-" + i);
                    } catch (UnavailableException full) {
                        // every idle topic was taken by the subscribers: refused, as it should be
                    }
                }
                return null;
            });
            List<RecordingSubscriber> subscribers = new ArrayList<>();
            Future<?> subscribing = pool.submit(() -> {
                start.await();
                for (int i = 0; i < 90; i++) {
                    RecordingSubscriber subscriber = new RecordingSubscriber();
                    hub.subscribe(Set.of("wanted-" + i), subscriber, OptionalLong.empty());
                    synchronized (subscribers) {
                        subscribers.add(subscriber);
                    }
                }
                return null;
            });
            start.countDown();
            subscribing.get(30, TimeUnit.SECONDS);
            flood.get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 90; i++) {
                long id = local.publish(SampleEvents.batch("wanted-" + i, "live", 1), Publication.NONE);
                assertEquals(List.of(id), subscribers.get(i).ids(), "wanted-" + i + " kept its subscriber");
            }
        } finally {
            pool.shutdownNow();
        }
    }
}

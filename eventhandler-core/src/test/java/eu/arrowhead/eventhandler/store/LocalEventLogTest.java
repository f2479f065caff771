package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.Replay;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A single node's event log in {@code store.mode=sync}, with a journal whose commits the test makes: what is
 * given, admitted and delivered while events wait for their commit.
 */
class LocalEventLogTest {
    private final ExecutorService publishers = Executors.newCachedThreadPool();
    private final CommittedByHand journal = new CommittedByHand();

    @AfterEach
    void stop() throws InterruptedException {
        publishers.shutdownNow();
        assertTrue(publishers.awaitTermination(10, TimeUnit.SECONDS));
    }

    /**
     * Publishes waiting for their commit hold their topics: {@code topic.max-count} counts them, so a third type
     * is refused at once instead of being answered 200 and then delivered to no topic (and kept in no window).
     */
    @Test
    void publishesWaitingForTheirCommitHoldTheirTopicsAgainstTheLimit() throws Exception {
        LocalHub local = new LocalHub(2, 10, 1 << 20, 1 << 20, journal);
        Future<Long> a = publishers.submit(() -> local.publish(SampleEvents.batch("a", "x", 1), Publication.NONE));
        journal.awaitAppended(1);
        Future<Long> b = publishers.submit(() -> local.publish(SampleEvents.batch("b", "x", 1), Publication.NONE));
        journal.awaitAppended(2);

        UnavailableException refused = assertThrows(UnavailableException.class,
                () -> local.publish(SampleEvents.batch("c", "x", 1), Publication.NONE));
        assertTrue(refused.getMessage().contains("topic.max-count"), refused.getMessage());

        journal.commitAll();
        assertEquals(1, a.get(10, TimeUnit.SECONDS));
        assertEquals(2, b.get(10, TimeUnit.SECONDS));
        assertEquals(List.of("a", "b"), local.hub().stats().stream().map(TopicStats::eventType).toList());
        assertEquals(List.of(1L, 1L), local.hub().stats().stream().map(TopicStats::published).toList());
    }

    /**
     * A resume from an id given but not yet committed waits: served now, it would be told of a sequence reset and
     * get the windows again; once the event is committed and delivered, the same resume is served from it.
     */
    @Test
    void aResumeFromAnIdStillBeingCommittedWaitsForIt() throws Exception {
        LocalHub local = new LocalHub(10, 10, 1 << 20, 1 << 20, journal);
        Future<Long> first = publishers.submit(() -> local.publish(SampleEvents.batch("a", "x", 2), Publication.NONE));
        Await.until("the log gave ids 1 and 2", Duration.ofSeconds(10), () -> local.log().mayStillDeliver(2));

        UnavailableException refused = assertThrows(UnavailableException.class,
                () -> local.hub().subscribe(Set.of("a"), new RecordingSubscriber(), OptionalLong.of(2)));
        assertTrue(refused.getMessage().contains("not yet received event 2"), refused.getMessage());
        Replay reset = local.hub().subscribe(Set.of("a"), new RecordingSubscriber(), OptionalLong.of(3));
        assertEquals(3, reset.gap().requestedAfterId(), "an id never given comes from before a lost sequence");

        journal.commitAll();
        assertEquals(1, first.get(10, TimeUnit.SECONDS));
        RecordingSubscriber resumed = new RecordingSubscriber();
        Replay replay = local.hub().subscribe(Set.of("a"), resumed, OptionalLong.of(1));
        assertEquals(List.of(2L), replay.events().stream().map(event -> event.id()).toList());
        assertEquals(2, replay.liveAfterId());
    }

    /** A keyed request's repeat is answered with the first ids, even while the log refuses new events. */
    @Test
    void aRepeatIsAnsweredWhileTheLogIsClosed() {
        LocalHub local = new LocalHub(10, 10, 1 << 20, 1 << 20, EventJournal.NONE);
        PublishKey key = new PublishKey("caller", "k", 42);
        List<IncomingEvent> events = SampleEvents.batch("a", "x", 3);
        long[] ids = local.log().append(events, key, Publication.NONE).join();
        assertArrayEquals(new long[] {1, 2, 3}, ids);
        local.log().close();

        assertArrayEquals(ids, local.log().answered(key));
        assertThrows(UnavailableException.class, () -> local.log().append(events, PublishKey.NONE, Publication.NONE));
        assertEquals(null, local.log().answered(new PublishKey("caller", "new", 42)));
    }

    /** A durable journal whose commits the test makes, in order. */
    private static final class CommittedByHand implements EventJournal {
        private final List<Runnable> deliveries = new ArrayList<>();
        private final List<CompletableFuture<Void>> commits = new ArrayList<>();
        private long appendedUpTo;

        @Override
        public long lastId() {
            return 0;
        }

        @Override
        public boolean durable() {
            return true;
        }

        @Override
        public synchronized CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, PublishKey key,
                                                           Runnable afterCommit) {
            CompletableFuture<Void> committed = new CompletableFuture<>();
            deliveries.add(afterCommit);
            commits.add(committed);
            appendedUpTo = firstId + events.size() - 1;
            notifyAll();
            return committed;
        }

        synchronized void awaitAppended(long id) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (appendedUpTo < id) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "id " + id + " was never appended");
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }

        /** Commits what was appended, in order: each delivery runs before its publish is answered. */
        void commitAll() {
            List<Runnable> toDeliver;
            List<CompletableFuture<Void>> toComplete;
            synchronized (this) {
                toDeliver = List.copyOf(deliveries);
                toComplete = List.copyOf(commits);
                deliveries.clear();
                commits.clear();
            }
            for (int i = 0; i < toDeliver.size(); i++) {
                toDeliver.get(i).run();
                toComplete.get(i).complete(null);
            }
        }

        @Override
        public boolean replays() {
            return false;
        }

        @Override
        public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter,
                            int maxEvents) {
            throw new UnavailableException("this journal keeps nothing");
        }
    }
}

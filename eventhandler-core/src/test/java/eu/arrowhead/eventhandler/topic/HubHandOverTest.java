package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.LocalEventLog;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ConcurrentPublishers;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import eu.arrowhead.eventhandler.testing.WatchedJournal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hand-over from replay to live: a subscriber that resumes from an id while other threads publish receives
 * every later event of its topics exactly once and in id order, the older ones in its replay and the rest live.
 * Publishers start together at a barrier; where the test wants one interleaving for sure, a delivery is held
 * inside the hub's lock until the subscriber queues for it.
 */
class HubHandOverTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Set<String> TOPICS = Set.of("a", "b");
    private static final int PUBLISHERS = 4;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        assertTrue(threads.awaitTermination(10, TimeUnit.SECONDS));
    }

    /**
     * Many runs of four publishers (batches of one to three events, two topics) and a subscriber that resumes from a
     * random id already given, while they go on: its replay and then its live events are every id after the resume
     * point, each once, in order, split where it was registered.
     */
    @Test
    void aResumeDuringConcurrentPublishesGetsEveryLaterEventOnceInOrder() throws Exception {
        Random random = new Random(5);
        for (int run = 0; run < 100; run++) {
            WatchedJournal journal = new WatchedJournal();
            LocalHub local = new LocalHub(10, 100_000, 1 << 26, 1 << 28, journal);
            Hub hub = local.hub();
            long resumeFrom = random.nextInt(200);
            RecordingSubscriber everything = everything(hub, TOPICS);
            ConcurrentPublishers publishers = publishers(local, random.nextLong(), 250);
            RecordingSubscriber live = new RecordingSubscriber();
            // Past the batch (of at most three) that holds resumeFrom, so that resumeFrom is delivered too.
            journal.awaitGiven(resumeFrom + 3 + random.nextInt(50), TIMEOUT);
            Replay replay = hub.subscribe(TOPICS, live, OptionalLong.of(resumeFrom));
            publishers.allow(100);
            journal.awaitGiven(replay.liveAfterId() + 100, TIMEOUT);
            publishers.stop(TIMEOUT);

            assertTrue(!replay.events().isEmpty() && !live.ids().isEmpty(),
                    "run " + run + ": both sides of the hand-over");
            assertNull(replay.gap(), "run " + run + ": the windows hold everything");
            assertHandOver("run " + run, replay, live, resumeFrom, everything);
        }
    }

    /**
     * A subscriber that comes while a batch is half delivered (held inside the hub's lock, after its ids were given
     * and its first events offered) waits for the whole batch: it is in the replay, every event of it, and live
     * delivery starts after it. Another publisher meanwhile waits for the log, behind the held batch.
     */
    @Test
    void aResumeThatComesDuringABatchGetsTheWholeBatchInItsReplay() throws Exception {
        for (int run = 0; run < 20; run++) {
            WatchedJournal journal = new WatchedJournal();
            LocalHub local = new LocalHub(10, 100_000, 1 << 26, 1 << 28, journal);
            Hub hub = local.hub();
            RecordingSubscriber everything = everything(hub, TOPICS);
            publish(local, SampleEvents.batch("a", "before", 10));
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            hub.subscribe(TOPICS, new HoldingSubscriber(13, holding, letGo), OptionalLong.empty());
            Future<?> batch = threads.submit(() -> publish(local, SampleEvents.batch("b", "held", 5)));
            assertTrue(holding.await(10, TimeUnit.SECONDS));
            RecordingSubscriber live = new RecordingSubscriber();
            Future<Replay> resume = threads.submit(() -> hub.subscribe(TOPICS, live, OptionalLong.of(3)));
            ConcurrentPublishers others = publishers(local, run, 20);
            Await.until("the resume queues for the hub's lock, another publisher for the log's", TIMEOUT,
                    () -> parkedIn(Hub.class, "subscribe") == 1 && parkedIn(LocalEventLog.class, "appendNew") >= 1);
            letGo.countDown();
            batch.get(10, TimeUnit.SECONDS);
            Replay replay = resume.get(10, TimeUnit.SECONDS);
            others.allow(50);
            journal.awaitGiven(replay.liveAfterId() + 50, TIMEOUT);
            others.stop(TIMEOUT);

            assertTrue(replay.liveAfterId() >= 15, "run " + run + ": the held batch was delivered before the resume"
                    + " registered, all of it: live after " + replay.liveAfterId());
            assertHandOver("run " + run, replay, live, 3, everything);
        }
    }

    /** A subscriber that holds the hub's lock when it is offered one id, until let go. */
    private record HoldingSubscriber(long holdAt, CountDownLatch holding, CountDownLatch letGo) implements Subscriber {
        @Override
        public SubscriberFilter filter() {
            return SubscriberFilter.NONE;
        }

        @Override
        public void offer(PublishedEvent event, Publication publication) {
            if (event.id() != holdAt) {
                return;
            }
            holding.countDown();
            try {
                assertTrue(letGo.await(30, TimeUnit.SECONDS), "a delivery held in the hub's lock was never let go");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /**
     * A resume from before its topic's replay window (the event store off) is told of the gap, exactly up to the
     * oldest event the window still holds, and gets every event of the topic after it once, while publishers go on.
     */
    @Test
    void aResumeFromBeforeTheWindowsIsToldOfTheGapAndGetsTheRestOnce() throws Exception {
        Random random = new Random(7);
        for (int run = 0; run < 50; run++) {
            WatchedJournal journal = new WatchedJournal();
            LocalHub local = new LocalHub(10, 16, 1 << 26, 1 << 28, journal);
            Hub hub = local.hub();
            RecordingSubscriber everything = everything(hub, Set.of("a"));
            ConcurrentPublishers publishers = publishers(local, random.nextLong(), 200);
            journal.awaitGiven(100 + random.nextInt(100), TIMEOUT);
            RecordingSubscriber live = new RecordingSubscriber();
            Replay replay = hub.subscribe(Set.of("a"), live, OptionalLong.of(5));
            publishers.allow(100);
            journal.awaitGiven(replay.liveAfterId() + 100, TIMEOUT);
            publishers.stop(TIMEOUT);

            ReplayGap gap = replay.gap();
            assertNotNull(gap, "run " + run);
            assertEquals(5, gap.requestedAfterId());
            assertTrue(gap.resumedAfterId() > 5 && gap.resumedAfterId() < replay.liveAfterId(),
                    "run " + run + ": " + gap);
            assertHandOver("run " + run, replay, live, gap.resumedAfterId(), everything);
        }
    }

    /**
     * Cluster mode: the stream gives the ids and the feed hands them over in order, again after a restart of its
     * consumer (ids the hub has are ignored). A resume from an id this node has not delivered yet is refused for a
     * moment (served now, it would get events twice); any other gets every later event once.
     */
    @Test
    void aResumeWhileTheFeedDeliversGetsEveryLaterEventOnce() throws Exception {
        Random random = new Random(11);
        for (int run = 0; run < 100; run++) {
            Hub hub = new Hub(10, 100_000, 1 << 26, 1 << 28, new StreamFedLog());
            RecordingSubscriber everything = everything(hub, TOPICS);
            LongFunction<IncomingEvent> eventOf = id -> SampleEvents.incoming(id % 3 == 0 ? "b" : "a", "logged-" + id);
            CountDownLatch halfWay = new CountDownLatch(1);
            AtomicLong lastToDeliver = new AtomicLong(Long.MAX_VALUE);
            long restartAt = 100 + random.nextInt(300);
            int overlap = 1 + random.nextInt(50);
            Future<Long> feed = threads.submit(() -> {
                long id = 1;
                for (; id <= lastToDeliver.get(); id++) {
                    deliver(hub, id, eventOf.apply(id));
                    if (id == restartAt) {
                        // A restarted consumer: the stream hands over ids the hub has delivered already.
                        for (long again = id - overlap + 1; again <= id; again++) {
                            deliver(hub, again, eventOf.apply(again));
                        }
                    }
                    if (id == 300) {
                        halfWay.countDown();
                    }
                }
                return id - 1;
            });
            assertTrue(halfWay.await(10, TimeUnit.SECONDS));
            RecordingSubscriber ahead = new RecordingSubscriber();
            UnavailableException refused = assertThrows(UnavailableException.class,
                    () -> hub.subscribe(TOPICS, ahead, OptionalLong.of(1_000_000)));
            assertTrue(refused.getMessage().contains("not yet received event 1000000"), refused.getMessage());
            long resumeFrom = random.nextInt(300);
            RecordingSubscriber live = new RecordingSubscriber();
            Replay replay = hub.subscribe(TOPICS, live, OptionalLong.of(resumeFrom));
            lastToDeliver.set(replay.liveAfterId() + 100);
            long last = feed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

            assertEquals(List.of(), ahead.ids(), "a refused resume is not registered");
            assertEquals(LongStream.rangeClosed(1, last).boxed().toList(), everything.ids(),
                    "every id once and in order, the restart's overlap ignored");
            assertTrue(!live.ids().isEmpty(), "run " + run + ": live delivery after the resume");
            assertHandOver("run " + run, replay, live, resumeFrom, everything);
        }
    }

    /** A subscriber of the topics registered before anything is published: it is offered every event of them. */
    private static RecordingSubscriber everything(Hub hub, Set<String> topics) {
        RecordingSubscriber everything = new RecordingSubscriber();
        hub.subscribe(topics, everything, OptionalLong.empty());
        return everything;
    }

    /**
     * What the subscriber received, its replay then its live events, is every event {@code everything} was offered
     * after {@code after}, each once and in order, split at {@link Replay#liveAfterId}.
     */
    private static void assertHandOver(String run, Replay replay, RecordingSubscriber live, long after,
                                       RecordingSubscriber everything) {
        List<Long> replayed = replay.events().stream().map(PublishedEvent::id).toList();
        List<Long> received = new ArrayList<>(replayed);
        received.addAll(live.ids());
        List<Long> expected = everything.ids().stream().filter(id -> id > after).toList();
        if (!expected.equals(received)) {
            throw new AssertionError(run + ": received " + describe(received, expected) + "; the replay ended at "
                    + (replayed.isEmpty() ? "-" : replayed.get(replayed.size() - 1)) + ", live delivery began after "
                    + replay.liveAfterId());
        }
        assertTrue(replayed.stream().allMatch(id -> id <= replay.liveAfterId())
                && live.ids().stream().allMatch(id -> id > replay.liveAfterId()),
                run + ": the replay holds what came before the registration, live delivery what came after");
    }

    /** Where the ids received first differ from those expected. */
    private static String describe(List<Long> received, List<Long> expected) {
        int at = 0;
        while (at < received.size() && at < expected.size() && received.get(at).equals(expected.get(at))) {
            at++;
        }
        return received.size() + " ids for " + expected.size() + " expected, the first difference at " + at + ": "
                + (at < received.size() ? received.get(at) : "none") + " for "
                + (at < expected.size() ? expected.get(at) : "none");
    }

    /**
     * Four publishers of both topics, straight to the hub, {@code allowed} batches for a start; each does the work its
     * publishes leave it.
     */
    private ConcurrentPublishers publishers(LocalHub local, long seed, int allowed) throws Exception {
        return ConcurrentPublishers.start(threads, PUBLISHERS, List.copyOf(TOPICS), seed, allowed,
                events -> publish(local, events));
    }

    private static void publish(LocalHub local, List<IncomingEvent> events) {
        Publication publication = Publication.queued();
        try {
            local.publish(events, publication);
        } finally {
            publication.runDeferred();
        }
    }

    private static void deliver(Hub hub, long id, IncomingEvent event) {
        Publication publication = Publication.queued();
        try {
            hub.deliver(id, List.of(event), publication);
        } finally {
            publication.runDeferred();
        }
    }

    /** Threads waiting for a lock in {@code type.method}. */
    private static long parkedIn(Class<?> type, String method) {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(thread -> thread.getKey().getState() == Thread.State.WAITING)
                .map(thread -> Arrays.asList(thread.getValue()))
                .filter(stack -> stack.stream().anyMatch(frame -> frame.getClassName().startsWith(
                        ReentrantLock.class.getName()) && frame.getMethodName().equals("lock")))
                .filter(stack -> stack.stream().anyMatch(frame -> frame.getClassName().equals(type.getName())
                        && frame.getMethodName().equals(method)))
                .count();
    }
}

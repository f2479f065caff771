package eu.arrowhead.eventhandler.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ConcurrentPublishers;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.testing.WatchedJournal;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Replay;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hand-over from replay to live down to the socket: a stream that resumes while four threads publish (and, as
 * in the server, write to idle subscribers themselves once the hub's lock is released), written by two writer
 * threads to a client that reads a few hundred bytes at a time, carries exactly its opening and then the frame of
 * every later event, once, in id order. Each run forces one of the interleavings around the start: live events
 * queued before the stream starts, or arriving while the writer is held inside a write of its replay.
 */
class ResumeHandOverTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String[] TOPICS = {"a", "b"};
    private static final int PUBLISHERS = 4;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final ExecutorService writerThreads = Executors.newFixedThreadPool(2);
    private final AtomicReference<Throwable> escaped = new AtomicReference<>();

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        writerThreads.shutdownNow();
        assertTrue(threads.awaitTermination(10, TimeUnit.SECONDS));
        assertTrue(writerThreads.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void aResumedStreamCarriesEveryLaterFrameOnceInOrder() throws Exception {
        Random random = new Random(3);
        int[] interleavings = new int[Interleaving.values().length];
        for (int run = 0; run < 60; run++) {
            Interleaving interleaving = Interleaving.values()[run % interleavings.length];
            interleavings[interleaving.ordinal()]++;
            WatchedJournal journal = new WatchedJournal();
            LocalHub local = new LocalHub(10, 100_000, 1 << 26, 1 << 28, journal);
            Hub hub = local.hub();
            RecordingSubscriber everything = new RecordingSubscriber();
            hub.subscribe(Set.of(TOPICS), everything, OptionalLong.empty());
            DeliveryRig rig = new DeliveryRig(local, 64L << 20, this::onWriter);
            StandInPort port = new StandInPort(64 + random.nextInt(1024));
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            if (interleaving == Interleaving.LIVE_DURING_A_REPLAY_WRITE) {
                port.holdWrite(2, holding, letGo);
            }
            AtomicLong target = new AtomicLong(Long.MAX_VALUE);
            Future<Long> client = threads.submit(() -> port.readUntil(received -> received >= target.get(), TIMEOUT));

            ConcurrentPublishers publishers = ConcurrentPublishers.start(threads, PUBLISHERS, List.of(TOPICS),
                    random.nextLong(), 200, rig::publish);
            long resumeFrom = random.nextInt(150);
            // Past the batch (of at most three) that holds resumeFrom, so that resumeFrom is delivered too.
            journal.awaitGiven(resumeFrom + 3 + random.nextInt(50), TIMEOUT);
            SubscriberQueue stream = rig.open(port, TOPICS);
            Replay replay = rig.subscribe(stream, OptionalLong.of(resumeFrom));
            assertNull(replay.gap());
            if (interleaving == Interleaving.LIVE_QUEUED_BEFORE_THE_START) {
                publishers.allow(30);
                journal.awaitGiven(replay.liveAfterId() + 30, TIMEOUT);
                assertTrue(stream.queued() > 0, "run " + run + ": live events wait for the start");
            }
            stream.start(DeliveryRig.OPENING, null, replay.events());
            if (interleaving == Interleaving.LIVE_DURING_A_REPLAY_WRITE) {
                assertTrue(holding.await(10, TimeUnit.SECONDS));
                publishers.allow(30);
                journal.awaitGiven(replay.liveAfterId() + 30, TIMEOUT);
                letGo.countDown();
            }
            publishers.allow(100);
            journal.awaitGiven(replay.liveAfterId() + 100, TIMEOUT);
            publishers.stop(TIMEOUT);

            byte[] expected = expectedBytes(everything.offered(), resumeFrom);
            target.set(expected.length);
            port.wake();
            client.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(null, escaped.get(), "no exception leaves a writer");
            assertBytes("run " + run + " (" + interleaving + ")", expected, port.bytes());
            assertEquals(0, port.writesWithoutRoom(), "run " + run + ": every write waited for room");
            assertEquals(List.of(), rig.ended(), "run " + run + ": the stream is still served");
        }
    }

    /** The interleavings around a resumed stream's start that each run forces. */
    private enum Interleaving {
        /** Whatever the threads make of it. */
        UNFORCED,
        /** Live events are queued after the registration and before the start. */
        LIVE_QUEUED_BEFORE_THE_START,
        /** Live events are queued while the writer is inside a write of the stream's replay (or its first frames). */
        LIVE_DURING_A_REPLAY_WRITE
    }

    private void onWriter(Runnable task) {
        writerThreads.execute(() -> {
            try {
                task.run();
            } catch (Throwable e) {
                escaped.compareAndSet(null, e);
            }
        });
    }

    /** The opening, then the frame of every event after {@code resumeFrom}, in id order. */
    private static byte[] expectedBytes(List<PublishedEvent> every, long resumeFrom) {
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.writeBytes(DeliveryRig.OPENING.frame());
        every.stream().filter(event -> event.id() > resumeFrom).forEach(event -> expected.writeBytes(event.frame()));
        return expected.toByteArray();
    }

    /** The bytes are equal, or the first frame where they part is named. */
    private static void assertBytes(String run, byte[] expected, byte[] actual) {
        int at = 0;
        while (at < expected.length && at < actual.length && expected[at] == actual[at]) {
            at++;
        }
        if (at == expected.length && at == actual.length) {
            return;
        }
        int from = Math.max(0, at - 120);
        throw new AssertionError(run + ": " + actual.length + " bytes for " + expected.length + ", parting at " + at
                + ":\nexpected ..." + text(expected, from, at + 120) + "\nreceived ..." + text(actual, from, at + 120));
    }

    private static String text(byte[] bytes, int from, int to) {
        return new String(bytes, from, Math.max(0, Math.min(to, bytes.length) - from), StandardCharsets.UTF_8);
    }
}

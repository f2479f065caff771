package eu.arrowhead.eventhandler.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.delivery.DeliveryRig.Ended;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.testing.WatchedJournal;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A subscriber's queue and writer against connections that keep up, trickle, stall, fail or close in the middle
 * of a write, driven step by step: the writer threads run when the test says ({@link ManualExecutor}), or, where
 * two threads must meet inside a write, latches decide who goes first.
 */
class SubscriberQueueTest {
    private static final String TOPIC = "temperature";
    private static final long QUEUE_MAX_BYTES = 1 << 20;
    /** Every id has four digits, so that the test's frames all cost the same in a queue. */
    private static final long IDS_AFTER = 999;

    private final LocalHub local = new LocalHub(10, 10_000, 1 << 24, 1 << 26, new WatchedJournal(IDS_AFTER));
    private final Hub hub = local.hub();
    private final RecordingSubscriber everything = new RecordingSubscriber();
    private final ManualExecutor writers = new ManualExecutor();
    private final DeliveryRig rig = new DeliveryRig(local, QUEUE_MAX_BYTES, writers);

    SubscriberQueueTest() {
        hub.subscribe(Set.of(TOPIC), everything, OptionalLong.empty());
    }

    /**
     * The client reads a few bytes at a time, so the writer fills the socket, waits for room, and goes on where it
     * stopped, on the publishing thread while it was idle and on a writer when the socket made room: the client
     * receives exactly the opening and then every frame, in order, and nothing is written while the socket is full.
     */
    @Test
    void aSlowClientReceivesEveryFrameInOrder() {
        StandInPort port = new StandInPort(300);
        rig.openLive(port, TOPIC);
        writers.runAll();
        Random random = new Random(20);
        for (int i = 0; i < 500; i++) {
            rig.publish(SampleEvents.batch(TOPIC, "slow-" + i, 1 + random.nextInt(3)));
            if (random.nextInt(3) == 0) {
                port.read(random.nextInt(400));
                writers.runAll();
            }
        }
        for (int rounds = 0; rounds < 100_000 && port.writes() < 1 + everything.offered().size(); rounds++) {
            port.read(1 + random.nextInt(400));
            writers.runAll();
        }

        assertArrayEquals(expectedBytes(everything.offered()), port.bytes(), "the opening, then every frame in order");
        assertEquals(0, port.writesWithoutRoom(), "every write waited for room");
        assertEquals(0, port.unflushed(), "nothing written was left unflushed");
        assertTrue(port.notifyRequests() > 10, "the socket was full time and again: " + port.notifyRequests());
        assertEquals(List.of(), rig.ended());
        assertEquals(0, rig.queuedBytes(), "an emptied queue holds nothing of the budget");
        TopicStats stats = hub.stats().get(0);
        assertEquals(stats.published(), stats.delivered(), "every event counted as written to the one stream");
    }

    /**
     * An idle stream's write is done by the publishing thread itself, once the hub's lock is released and before its
     * publish returns: no writer thread is woken. A stream whose writer is already under way just gets the event
     * queued, and its writer takes it.
     */
    @Test
    void anIdleStreamIsWrittenByThePublisherAndABusyOneByItsWriter() {
        StandInPort port = new StandInPort(400);
        rig.openLive(port, TOPIC);
        writers.runAll();

        rig.publish(SampleEvents.batch(TOPIC, "idle", 1));
        assertEquals(0, writers.waiting(), "no writer woken");
        assertEquals(2, port.writes(), "the opening, and the event written by the publisher");

        rig.publish(SampleEvents.batch(TOPIC, "fill", 4));
        assertTrue(port.waitingForRoom(), "the socket is full, and the rest waits for room");
        int written = port.writes();
        rig.publish(SampleEvents.batch(TOPIC, "busy", 2));
        assertEquals(written, port.writes(), "the publisher leaves a stream that waits for room alone");
        port.read(Long.MAX_VALUE);
        assertEquals(1, writers.waiting(), "room: a writer is woken");
        writers.runAll();
        assertArrayEquals(expectedBytes(everything.offered()), port.bytes());
    }

    /**
     * A client that stops reading: the writer parks on the full socket (no thread waits), and the supervisor's
     * tick cuts the stream off once the socket has taken nothing for the write timeout, not before.
     */
    @Test
    void aStalledClientIsCutOffAtTheWriteTimeout() {
        StandInPort port = new StandInPort(1);
        SubscriberQueue stream = rig.openLive(port, TOPIC);
        writers.runAll();
        rig.publish(SampleEvents.batch(TOPIC, "stalled", 5));
        writers.runAll();
        assertTrue(port.waitingForRoom(), "the writer waits for the socket, on no thread");
        assertEquals(1, port.writes(), "the opening only: the socket has been full since");
        assertEquals(5, stream.queued());

        rig.supervisor.tick(System.nanoTime() + DeliveryRig.WRITE_TIMEOUT.toNanos() / 2);
        assertEquals(List.of(), rig.ended(), "blocked for half the write timeout: still served");
        rig.supervisor.tick(System.nanoTime() + DeliveryRig.WRITE_TIMEOUT.toNanos() + 1);

        assertEquals(List.of(new Ended(DisconnectReason.WRITE_TIMEOUT, 5)), rig.ended(),
                "cut off once, by the timeout");
        assertTrue(port.terminated(), "terminated, not closed: a graceful close would wait for the client to read");
        assertGivenBack(rig);
        port.read(Long.MAX_VALUE);
        writers.runAll();
        rig.publish(SampleEvents.batch(TOPIC, "after", 3));
        writers.runAll();
        assertEquals(1, port.writes(), "nothing is written to a stream that was cut off");
        assertEveryOfferCounted(5);
    }

    /**
     * A client that reads slower than events arrive fills its queue: the offer that would pass
     * {@code subscriber.queue-max-bytes} cuts it off as slow. Not inline, under the hub's lock, but on a writer.
     */
    @Test
    void aStalledClientIsCutOffWhenItsQueueIsFull() {
        int frames = 20;
        DeliveryRig bounded = new DeliveryRig(local, frames * frameCost(), writers);
        StandInPort port = new StandInPort(1);
        SubscriberQueue stream = bounded.openLive(port, TOPIC);
        writers.runAll();
        for (int i = 0; i < frames; i++) {
            bounded.publish(List.of(SampleEvents.incoming(TOPIC, String.format("full-%04d", i))));
        }
        assertEquals(frames, stream.queued());
        assertEquals(List.of(), bounded.ended(), "full to the byte, and still served");

        bounded.publish(List.of(SampleEvents.incoming(TOPIC, "over-0000")));
        bounded.publish(List.of(SampleEvents.incoming(TOPIC, "late-0000")));
        assertEquals(List.of(), bounded.ended(), "not closed under the hub's lock");
        assertEquals(1, writers.waiting(), "one close, however many events overflow");
        writers.runAll();

        assertEquals(List.of(new Ended(DisconnectReason.SLOW, frames)), bounded.ended());
        assertTrue(port.terminated());
        assertGivenBack(bounded);
        // The event offered while the cut-off was pending is counted neither way; its client gets it on its resume.
        assertEveryOfferCounted(frames + 1);
    }

    /**
     * A resume whose replay is still being read from the event store has written nothing yet: when its live queue
     * overflows meanwhile, it is answered with the refusal (the client comes back), never cut off in silence.
     */
    @Test
    void aQueueThatOverflowsBeforeTheStartIsAnsweredWithTheRefusal() {
        DeliveryRig bounded = new DeliveryRig(local, 3 * frameCost(), writers);
        StandInPort port = StandInPort.keepingUp();
        SubscriberQueue stream = bounded.open(port, TOPIC);
        bounded.subscribe(stream, OptionalLong.of(0));
        for (int i = 0; i < 4; i++) {
            bounded.publish(List.of(SampleEvents.incoming(TOPIC, String.format("wait-%04d", i))));
        }
        writers.runAll();

        assertEquals(List.of(new Ended(DisconnectReason.REFUSED, 0)), bounded.ended());
        assertTrue(port.refusal().startsWith("events arrived faster than the event store could replay"),
                port.refusal());
        assertTrue(port.ended(), "the refusal's response is complete");
        assertFalse(port.terminated());
        assertGivenBack(bounded);
        stream.start(DeliveryRig.OPENING, null, List.of());
        writers.runAll();
        assertTrue(port.text().startsWith("retry: 2000\nevent: eventhandler.unavailable\n"), port.text());
        assertEquals(0, port.writes(), "a start after the refusal writes nothing");
    }

    /**
     * A resume that waits for a reader has its headers and opening out already ({@code openAhead}): a refusal
     * then comes as frames into the open stream, which ends, and the connection no longer knows the stream.
     */
    @Test
    void aRefusalAfterTheOpeningIsWrittenIntoTheOpenStream() {
        StandInPort port = StandInPort.keepingUp();
        SubscriberQueue stream = rig.open(port, TOPIC);
        rig.subscribe(stream, OptionalLong.of(0));
        stream.openAhead(DeliveryRig.OPENING);
        assertTrue(port.watching());
        rig.publish(SampleEvents.batch(TOPIC, "queued", 3));

        stream.refuse("the event store could not be read; resume again later");
        writers.runAll();

        assertTrue(port.text().startsWith(":ok\n\nretry: 2000\nevent: eventhandler.unavailable\ndata: "), port.text());
        assertTrue(port.text().contains("the event store could not be read"), port.text());
        assertTrue(port.ended());
        assertFalse(port.watching());
        assertEquals(List.of(new Ended(DisconnectReason.REFUSED, 0)), rig.ended(),
                "its events are left for its resume");
        assertGivenBack(rig);
    }

    /**
     * A write fails (the connection was reset): no exception leaves the writer, the stream is cut off as
     * WRITE_FAILED once, its queue and its place are given back.
     */
    @Test
    void aWriteThatFailsCutsTheStreamOffAndGivesItsQueueBack() {
        StandInPort port = StandInPort.keepingUp();
        port.failAtWrite(3);
        SubscriberQueue stream = rig.open(port, TOPIC);
        rig.subscribe(stream, OptionalLong.empty());
        rig.publish(SampleEvents.batch(TOPIC, "reset", 10));
        stream.start(DeliveryRig.OPENING, null, List.of());
        writers.runAll();

        assertEquals(3, port.writes(), "the opening, one event, and the write that failed");
        assertEquals(1, rig.ended().size());
        assertEquals(DisconnectReason.WRITE_FAILED, rig.ended().get(0).reason());
        assertTrue(port.terminated());
        assertGivenBack(rig);
        assertEveryOfferCounted(10);
    }

    /** The connection fails while the writer waits for room: Grizzly tells its write handler, which ends the stream. */
    @Test
    void aConnectionThatFailsWhileTheWriterWaitsForRoomEndsTheStream() {
        StandInPort port = new StandInPort(1);
        rig.openLive(port, TOPIC);
        writers.runAll();
        rig.publish(SampleEvents.batch(TOPIC, "waiting", 4));
        assertTrue(port.waitingForRoom());

        port.failWhileWaiting(new IOException("Connection reset by peer"));
        writers.runAll();

        assertEquals(List.of(new Ended(DisconnectReason.WRITE_FAILED, 4)), rig.ended());
        assertGivenBack(rig);
        assertEveryOfferCounted(4);
    }

    /**
     * The client closes its connection while the writer is inside a write, holding the stream's monitor: the
     * close waits for the write, which then fails; the stream ends once, as closed by its client, no exception
     * leaves either thread, and its queue and place are given back.
     */
    @Test
    void aClientThatClosesInTheMiddleOfAWrite() throws Exception {
        AtomicReference<Throwable> escaped = new AtomicReference<>();
        ExecutorService writerThread = Executors.newSingleThreadExecutor();
        DeliveryRig threaded = new DeliveryRig(local, QUEUE_MAX_BYTES, task -> writerThread.execute(() -> {
            try {
                task.run();
            } catch (Throwable e) {
                escaped.compareAndSet(null, e);
            }
        }));
        StandInPort port = StandInPort.keepingUp();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        port.holdWrite(3, holding, letGo);
        SubscriberQueue stream = threaded.open(port, TOPIC);
        threaded.subscribe(stream, OptionalLong.empty());
        threaded.publish(SampleEvents.batch(TOPIC, "mid-write", 10));
        stream.start(DeliveryRig.OPENING, null, List.of());
        assertTrue(holding.await(10, TimeUnit.SECONDS), "the writer is inside its third write");

        Thread client = new Thread(() -> {
            try {
                port.closeByClient();
            } catch (Throwable e) {
                escaped.compareAndSet(null, e);
            }
        }, "client-close");
        client.start();
        Await.until("the close waits for the write in progress", Duration.ofSeconds(10),
                () -> client.getState() == Thread.State.BLOCKED && Arrays.stream(client.getStackTrace()).anyMatch(
                        frame -> frame.getClassName().equals(SubscriberQueue.class.getName())
                                && frame.getMethodName().equals("close")));
        assertEquals(List.of(), threaded.ended(), "the stream does not end in the middle of a write");
        letGo.countDown();
        client.join(10_000);
        writerThread.shutdown();
        assertTrue(writerThread.awaitTermination(10, TimeUnit.SECONDS));

        assertEquals(null, escaped.get(), "no exception leaves the writer or the closing thread");
        assertEquals(1, threaded.ended().size(), "one end: " + threaded.ended());
        assertEquals(DisconnectReason.CLIENT_CLOSED, threaded.ended().get(0).reason());
        assertFalse(port.terminated(), "the client closed it already");
        assertEquals(3, port.writes());
        assertGivenBack(threaded);
        assertEveryOfferCounted(10);
    }

    /**
     * At shutdown a stream writes what it holds and then ends its response, whose last chunk, too, waits for room
     * in the socket rather than blocking the writer.
     */
    @Test
    void aStreamThatFinishesWritesWhatItHoldsThenEndsCleanly() {
        StandInPort port = new StandInPort(1);
        SubscriberQueue stream = rig.openLive(port, TOPIC);
        writers.runAll();
        rig.publish(SampleEvents.batch(TOPIC, "last", 6));
        hub.close();
        stream.finish();
        writers.runAll();
        assertFalse(port.ended(), "the socket is full: the end waits");

        for (int i = 0; i < 100 && !port.ended(); i++) {
            port.read(Long.MAX_VALUE);
            writers.runAll();
        }

        assertTrue(port.ended());
        assertEquals(0, port.writesWithoutRoom(), "nor did the end block on a full socket");
        assertFalse(port.watching(), "a connection kept alive for other requests no longer knows the stream");
        assertEquals(List.of(new Ended(DisconnectReason.SHUTDOWN, 0)), rig.ended());
        assertArrayEquals(expectedBytes(everything.offered()), port.bytes());
        assertGivenBack(rig);
    }

    /** A heartbeat is queued only for a stream idle for the heartbeat interval, by the supervisor's tick. */
    @Test
    void anIdleStreamGetsAHeartbeat() {
        StandInPort port = StandInPort.keepingUp();
        rig.openLive(port, TOPIC);
        writers.runAll();
        rig.supervisor.tick(System.nanoTime());
        writers.runAll();
        assertEquals(":ok\n\n", port.text());

        rig.supervisor.tick(System.nanoTime() + DeliveryRig.HEARTBEAT.toNanos() + 1);
        writers.runAll();
        assertEquals(":ok\n\n:\n\n", port.text());
        assertEquals(List.of(), rig.ended());
    }

    /**
     * A stream told it has the events up to an id (a resume served ahead of a cluster node's feed) drops those, and
     * still gets its heartbeats, whose frames have no id.
     */
    @Test
    void aStreamThatHasEventsUpToAnIdDropsThoseButNotItsHeartbeats() {
        StandInPort port = StandInPort.keepingUp();
        SubscriberQueue stream = rig.openLive(port, TOPIC);
        stream.hasUpTo(IDS_AFTER + 1);
        rig.publish(List.of(SampleEvents.incoming(TOPIC, "had-0000")));
        rig.publish(List.of(SampleEvents.incoming(TOPIC, "new-0000")));
        writers.runAll();
        assertFalse(port.text().contains("had-0000"), port.text());
        assertTrue(port.text().contains("new-0000"), port.text());

        rig.supervisor.tick(System.nanoTime() + DeliveryRig.HEARTBEAT.toNanos() + 1);
        writers.runAll();
        assertTrue(port.text().endsWith("\n\n:\n\n"), port.text());
    }

    /** What a frame of {@code SampleEvents.incoming(TOPIC, "xxxx-0000")} costs in a queue. */
    private long frameCost() {
        LocalHub sizing = new LocalHub(1, 1, 1 << 20, 1 << 20, new WatchedJournal(IDS_AFTER));
        RecordingSubscriber one = new RecordingSubscriber();
        sizing.hub().subscribe(Set.of(TOPIC), one, OptionalLong.empty());
        sizing.publish(List.of(SampleEvents.incoming(TOPIC, "size-0000")), Publication.NONE);
        return QueueBudget.cost(one.offered().get(0).frame().length);
    }

    private static byte[] expectedBytes(List<PublishedEvent> frames) {
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.writeBytes(DeliveryRig.OPENING.frame());
        frames.forEach(frame -> expected.writeBytes(frame.frame()));
        return expected.toByteArray();
    }

    /** The stream's queue bytes, its place and its heap charge are back, and the hub no longer offers it events. */
    private void assertGivenBack(DeliveryRig rig) {
        assertEquals(0, rig.queuedBytes(), "the queue's bytes are back in the budget");
        assertEquals(0, rig.supervisor.openStreams(), "its place is free");
        assertEquals(0, rig.supervisor.streamsHeapCharged(), "its heap charge is back");
        assertEquals(1, hub.stats().get(0).subscribers(), "only the recorder is still subscribed");
    }

    /** Every event offered to the one stream is counted once: written, or dropped. */
    private void assertEveryOfferCounted(int offered) {
        TopicStats stats = hub.stats().get(0);
        assertEquals(offered, stats.delivered() + stats.dropped(),
                "delivered " + stats.delivered() + " + dropped " + stats.dropped());
    }
}

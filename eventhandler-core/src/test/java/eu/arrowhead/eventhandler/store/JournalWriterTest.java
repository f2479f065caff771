package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.config.EventHandlerConfig.StoreMode;
import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writer's states without HTTP or a database: up, behind a working database (buffer full), down (async:
 * the oldest dropped with their ids recorded; sync: publishes refused), and shutdown. The database is a
 * stand-in whose transactions the test lets succeed, fail or wait.
 */
class JournalWriterTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String TOPIC = "writer-test";
    private static final long LARGE = 1L << 30;

    private final ScriptedDatabase database = new ScriptedDatabase();
    private final MissingRanges missing = new MissingRanges(0, List.of());
    private JournalWriter writer;
    private IdMark ids;

    @AfterEach
    void stopTheWriter() throws InterruptedException {
        database.release();
        if (writer != null) {
            writer.stop();
        }
        if (ids != null) {
            ids.close();
        }
    }

    @TempDir
    Path directory;

    private JournalWriter start(StoreMode mode, int bufferEvents) throws IOException {
        return start(mode, bufferEvents, IdMark.MIN_BLOCK);
    }

    private JournalWriter start(StoreMode mode, int bufferEvents, int idBlock) throws IOException {
        ids = IdMark.reserveAbove(directory.resolve("eventhandler.ids"), 0, idBlock);
        writer = new JournalWriter(database, ids, mode, 1000, new WriteBuffer(bufferEvents, LARGE), 0, missing);
        writer.start();
        return writer;
    }

    /**
     * Ids are given only once the id mark on disk covers them: the writer reserves the next block when half of the
     * last is used, and an append past the reservation is refused (503) until it is recorded.
     */
    @Test
    void noIdIsGivenBeforeTheIdMarkOnDiskCoversIt() throws Exception {
        start(StoreMode.ASYNC, 1000, 10);
        Path file = directory.resolve("eventhandler.ids");
        Set<Long> refused = new HashSet<>();
        for (long id = 1; id <= 100; id++) {
            long next = id;
            if (!taken(next, 1)) {
                refused.add(next);
                Await.until("id " + next + " taken once its block is recorded", WAIT, () -> taken(next, 1));
            }
            assertTrue(mark(file) >= id, "id " + id + " given before the mark covered it");
        }
        assertTrue(writer.drain(WAIT));
        assertTrue(mark(file) >= 100);
        assertTrue(mark(file) <= 110, "the mark stays within a block of the ids given");
        // A block is asked for with 4 ids left, and covers 10 after the last given: appending as fast as a loop can,
        // faster than an fsync, at most every sixth id waits for its block (15 of the 90 after the first block).
        assertTrue(refused.size() <= 15, "ids that waited for their block: " + refused);
    }

    @Test
    void eventsStayReadableFromTheBufferUntilTheirCommitThenComeFromTheDatabase() throws Exception {
        database.hold();
        start(StoreMode.ASYNC, 100);
        writer.append(1, events(2), PublishKey.NONE, null);
        writer.append(3, events(1), PublishKey.NONE, null);
        database.awaitTransaction();

        JournalWriter.Unwritten during = writer.unwritten(0, 10, Set.of(TOPIC));
        assertEquals(List.of(1L, 2L, 3L), during.buffered().stream().map(PublishedEvent::id).toList());
        assertEquals(0, during.committedUpTo());
        assertEquals(3, writer.status().bufferedEvents());

        database.release();
        assertTrue(writer.drain(WAIT));
        assertEquals(List.of(1L, 2L, 3L), database.committedIds());
        JournalWriter.Unwritten after = writer.unwritten(0, 10, Set.of(TOPIC));
        assertEquals(List.of(), after.buffered());
        assertEquals(3, after.committedUpTo());
        EventStore.Status status = writer.status();
        assertEquals("UP", status.status());
        assertEquals(3, status.writtenEvents());
        assertEquals(3, status.lastLoggedId());
    }

    @Test
    void inSyncModeThePublishesThatArriveDuringACommitShareTheNextOneAndAreDeliveredInOrder() throws Exception {
        database.hold();
        start(StoreMode.SYNC, 100);
        List<Long> delivered = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> first = writer.append(1, events(1), PublishKey.NONE, () -> delivered.add(1L));
        database.awaitTransaction();
        CompletableFuture<Void> second = writer.append(2, events(1), PublishKey.NONE, () -> delivered.add(2L));
        CompletableFuture<Void> third = writer.append(3, events(1), PublishKey.NONE, () -> delivered.add(3L));
        assertFalse(first.isDone());

        database.release();
        CompletableFuture.allOf(first, second, third).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of(List.of(1L), List.of(2L, 3L)), database.transactions());
        assertEquals(List.of(1L, 2L, 3L), delivered);
    }

    /** A batch larger than what is left of the block, while more than half of it is left, gets the next block too. */
    @Test
    void aBatchBeyondTheReservedIdsGetsTheNextBlockAndIsThenTaken() throws Exception {
        start(StoreMode.ASYNC, 1000, 10);
        Path file = directory.resolve("eventhandler.ids");
        writer.append(1, events(4), PublishKey.NONE, null);
        assertEquals(10, mark(file), "6 of 10 left: no new block yet");
        assertFalse(taken(5, 8), "ids 5-12 are not all reserved yet");
        Await.until("the batch taken once the block it needs is recorded", WAIT, () -> taken(5, 8));
        assertTrue(mark(file) >= 12);
        assertTrue(writer.drain(WAIT));
        assertEquals(12, database.committedIds().size());
    }

    /** Appends {@code count} events from {@code firstId}: whether the writer took them (false: refused for now). */
    private boolean taken(long firstId, int count) {
        try {
            writer.append(firstId, events(count), PublishKey.NONE, null);
            return true;
        } catch (UnavailableException e) {
            return false;
        }
    }

    @Test
    void inSyncModeAPublishIsAnsweredAndDeliveredOnlyOnceItsCommitIsForcedToDisk() throws Exception {
        start(StoreMode.SYNC, 100);
        List<Long> forcedWhenDelivered = new CopyOnWriteArrayList<>();
        List<Long> forcedWhenAnswered = new CopyOnWriteArrayList<>();
        for (long id = 1; id <= 50; id++) {
            writer.append(id, events(1), PublishKey.NONE, () -> forcedWhenDelivered.add(database.forcedUpTo()))
                    .thenRun(() -> forcedWhenAnswered.add(database.forcedUpTo()));
        }
        assertTrue(writer.drain(WAIT));
        Await.until("every publish answered", WAIT, () -> forcedWhenAnswered.size() == 50);
        assertEquals(50, forcedWhenDelivered.size());
        for (int i = 0; i < 50; i++) {
            assertTrue(forcedWhenDelivered.get(i) >= i + 1, "event " + (i + 1) + " delivered before it was forced");
        }
        assertTrue(forcedWhenAnswered.stream().allMatch(forced -> forced > 0));
        assertEquals(50, database.forcedUpTo());
    }

    @Test
    void aFullBufferBehindAWorkingDatabaseRefusesAppendsAndDropsNothing() throws Exception {
        database.hold();
        start(StoreMode.ASYNC, 4);
        writer.append(1, events(2), PublishKey.NONE, null);
        database.awaitTransaction();
        writer.append(3, events(2), PublishKey.NONE, null);

        assertThrows(UnavailableException.class, () -> writer.append(5, events(1), PublishKey.NONE, null));
        assertEquals(1, writer.status().refusedPublishes());
        assertEquals(4, writer.status().bufferedEvents());

        database.release();
        assertTrue(writer.drain(WAIT));
        assertEquals(List.of(1L, 2L, 3L, 4L), database.committedIds());
        assertEquals(0, writer.status().droppedEvents());
        assertEquals(0, missing.count());
    }

    @Test
    void whileTheDatabaseIsDownTheOldestEventsAreDroppedAndTheirIdsSavedExactlyOnceItIsBack() throws Exception {
        database.down = true;
        start(StoreMode.ASYNC, 4);
        writer.append(1, events(2), PublishKey.NONE, null);
        Await.until("the writer finds the database down", WAIT, () -> !writer.status().isUp());
        writer.append(3, events(2), PublishKey.NONE, null);
        writer.append(5, events(1), PublishKey.NONE, null);
        writer.append(6, events(2), PublishKey.NONE, null);

        assertEquals(4, writer.status().droppedEvents());
        JournalWriter.Unwritten unwritten = writer.unwritten(0, 10, Set.of(TOPIC));
        assertEquals(List.of(new ReplayGap(0, 4)), unwritten.gaps());
        assertEquals(List.of(5L, 6L, 7L), unwritten.buffered().stream().map(PublishedEvent::id).toList());

        database.down = false;
        Await.until("the writer catches up", WAIT, () -> writer.status().lastLoggedId() == 7);
        assertEquals(List.of(5L, 6L, 7L), database.committedIds());
        assertEquals(List.of(new MissingRanges.Range(1, 4)), database.savedRanges);
        assertEquals(List.of(), missing.unsaved());
        // Up once writes have worked for WriteOutage.SETTLE_SECONDS: a half-working database must not flap.
        Await.until("the writer is up again", WAIT, () -> writer.status().isUp());
    }

    @Test
    void inSyncModeAPublishFailsWhileTheDatabaseIsDownAndPublishesAreTakenAgainOnceItAnswers() throws Exception {
        database.down = true;
        start(StoreMode.SYNC, 100);
        List<Long> delivered = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> failed = writer.append(1, events(1), PublishKey.NONE, () -> delivered.add(1L));

        ExecutionException refusal = assertThrows(ExecutionException.class,
                () -> failed.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(UnavailableException.class, refusal.getCause());
        assertThrows(UnavailableException.class, () -> writer.append(2, events(1), PublishKey.NONE, () -> delivered.add(2L)));

        database.down = false;
        Await.until("the writer finds the database back", WAIT, () -> writer.status().isUp());
        writer.append(3, events(1), PublishKey.NONE, () -> delivered.add(3L)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of(3L), database.committedIds());
        assertEquals(List.of(3L), delivered);
    }

    @Test
    void aStopAfterEverythingIsWrittenReportsTheLastIdForACleanStop() throws Exception {
        start(StoreMode.ASYNC, 100);
        writer.append(1, events(3), PublishKey.NONE, null);
        assertTrue(writer.drain(WAIT));
        assertEquals(OptionalLong.of(3), writer.stop());
    }

    @Test
    void aStopWhileTheDatabaseIsDownGivesUpAndReportsEventsUnwritten() throws Exception {
        database.down = true;
        start(StoreMode.ASYNC, 100);
        writer.append(1, events(3), PublishKey.NONE, null);
        Await.until("the writer finds the database down", WAIT, () -> !writer.status().isUp());

        assertEquals(OptionalLong.empty(), writer.stop());
        assertEquals(List.of(), database.committedIds());
        assertEquals(3, writer.status().bufferedEvents());
    }

    @Test
    void aCommitWhoseAnswerWasLostIsNotWrittenTwice() throws Exception {
        database.loseNextAnswer = true;
        start(StoreMode.ASYNC, 100);
        writer.append(1, events(2), PublishKey.NONE, null);
        Await.until("the first write fails", WAIT, () -> writer.status().failedTransactions() == 1);
        writer.append(3, events(1), PublishKey.NONE, null);

        // Up once writes have worked for WriteOutage.SETTLE_SECONDS (a drain stops the writer first).
        Await.until("the writer is up again", WAIT, () -> writer.status().isUp());
        assertTrue(writer.drain(WAIT), "the writer did not catch up");
        assertEquals(List.of(List.of(1L, 2L), List.of(3L)), database.transactions());
        EventStore.Status status = writer.status();
        assertEquals("UP", status.status());
        assertEquals(3, status.writtenEvents());
        assertEquals(3, status.lastLoggedId());
    }

    private static long mark(Path file) {
        try {
            return IdMark.read(file).orElse(0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<IncomingEvent> events(int count) {
        List<IncomingEvent> events = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] json = EventEncoding.withIdZero(TOPIC, String.valueOf(i), null, null, null);
            events.add(new IncomingEvent(TOPIC, TOPIC, null, Map.of(), 0, json));
        }
        return events;
    }

    /** A database whose transactions succeed, fail while it is down, or wait at their start while held. */
    private static final class ScriptedDatabase implements BatchSink {
        private final BlockingQueue<List<Long>> transactions = new LinkedBlockingQueue<>();
        private final Semaphore started = new Semaphore(0);
        private final List<MissingRanges.Range> savedRanges = new CopyOnWriteArrayList<>();
        private volatile CountDownLatch held;
        private volatile boolean down;
        /** The next transaction commits, then reports a failure, as a connection cut after the commit does. */
        private volatile boolean loseNextAnswer;

        /** Transactions from now on wait until {@link #release}. */
        void hold() {
            held = new CountDownLatch(1);
        }

        void release() {
            CountDownLatch latch = held;
            held = null;
            if (latch != null) {
                latch.countDown();
            }
        }

        void awaitTransaction() throws InterruptedException {
            assertTrue(started.tryAcquire(WAIT.toSeconds(), TimeUnit.SECONDS), "the writer began no transaction");
        }

        /** The ids of each committed transaction, in commit order. */
        List<List<Long>> transactions() {
            return List.copyOf(transactions);
        }

        List<Long> committedIds() {
            return transactions.stream().flatMap(List::stream).toList();
        }

        @Override
        public void write(List<WriteBuffer.Entry> batch, List<MissingRanges.Range> missing) {
            started.release();
            CountDownLatch latch = held;
            try {
                if (latch != null && !latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the transaction");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            if (down) {
                throw new IllegalStateException("the database is down");
            }
            List<Long> ids = batch.stream()
                    .flatMap(entry -> LongStream.rangeClosed(entry.firstId(), entry.lastId()).boxed()).toList();
            if (ids.stream().anyMatch(committedIds()::contains)) {
                throw new IllegalStateException("duplicate primary key: " + ids);
            }
            savedRanges.addAll(missing);
            transactions.add(ids);
            if (loseNextAnswer) {
                loseNextAnswer = false;
                throw new IllegalStateException("the connection broke after the commit");
            }
        }

        /** What the last force found committed; a sync-mode publish may be answered only up to it. */
        private volatile long forcedUpTo;

        @Override
        public void force() {
            forcedUpTo = lastWrittenId();
        }

        long forcedUpTo() {
            return forcedUpTo;
        }

        @Override
        public long lastWrittenId() {
            List<Long> ids = committedIds();
            return ids.isEmpty() ? 0 : ids.get(ids.size() - 1);
        }

        @Override
        public void takesWrites() {
            if (down) {
                throw new IllegalStateException("the database is down");
            }
        }
    }
}

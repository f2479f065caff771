package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The writer's batch is bounded in bytes as well as in events: H2 holds copies of a transaction's large events
 * that the buffer does not count (issue 29), so a full buffer of 60 KB events is not written as one batch.
 */
class WriteBufferTest {
    private static final long BUFFER_BYTES = 8_000;

    @Test
    void aBatchTakesAtMostAnEighthOfTheBuffersBytes() {
        WriteBuffer buffer = new WriteBuffer(1_000, BUFFER_BYTES);
        for (int id = 1; id <= 10; id++) {
            buffer.add(entry(id, 400));
        }
        assertEquals(List.of(1L, 2L), firstIds(buffer.take(1_000)));
        buffer.committed();
        assertEquals(List.of(3L, 4L), firstIds(buffer.take(1_000)));
        // The taken batch stays counted until its commit.
        assertEquals(8, buffer.events());
    }

    @Test
    void aPublishLargerThanABatchIsTakenAlone() {
        WriteBuffer buffer = new WriteBuffer(1_000, BUFFER_BYTES);
        buffer.add(entry(1, 5_000));
        buffer.add(entry(2, 10));
        assertEquals(List.of(1L), firstIds(buffer.take(1_000)));
        buffer.committed();
        assertEquals(List.of(2L), firstIds(buffer.take(1_000)));
    }

    @Test
    void smallEventsAreStillBatchedUpToTheEventBound() {
        WriteBuffer buffer = new WriteBuffer(1_000, BUFFER_BYTES);
        for (int id = 1; id <= 10; id++) {
            buffer.add(entry(id, 10));
        }
        assertEquals(3, buffer.take(3).size());
    }

    @Test
    void theLastEighthIsKeptForSmallPublishes() {
        WriteBuffer buffer = new WriteBuffer(1_000, BUFFER_BYTES);
        long large = BUFFER_BYTES / 8;
        int id = 1;
        while (buffer.fits(1, large)) {
            buffer.add(entry(id++, large));
        }
        assertEquals(7 * BUFFER_BYTES / 8, buffer.bytes(), "large publishes stop at seven eighths");
        assertTrue(buffer.fits(1, BUFFER_BYTES / 256), "a small publish still fits");
        assertFalse(buffer.fitsBody(large), "a large body does not");
        while (buffer.fits(1, 10)) {
            buffer.add(entry(id++, 10));
        }
        assertEquals(BUFFER_BYTES, buffer.bytes(), "small publishes fill the rest");
    }

    @Test
    void aBatchOfManyEventsIsLargeToo() {
        WriteBuffer buffer = new WriteBuffer(1_024, 1_000_000);
        buffer.add(entry(1, 10, 7 * 1_024 / 8));
        assertFalse(buffer.fits(5, 10), "a batch over 1/256 of the events bound stops at seven eighths");
        assertTrue(buffer.fits(4, 10), "a batch of at most 1/256 still fits");
    }

    private static WriteBuffer.Entry entry(long id, long bytes) {
        return entry(id, bytes, 1);
    }

    private static WriteBuffer.Entry entry(long id, long bytes, int count) {
        return new WriteBuffer.Entry(id, Collections.nCopies(count, SampleEvents.incoming("sized", "p")),
                PublishKey.NONE, 0, bytes, null, null);
    }


    private static List<Long> firstIds(List<WriteBuffer.Entry> batch) {
        return batch.stream().map(WriteBuffer.Entry::firstId).toList();
    }
}

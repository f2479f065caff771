package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.topic.PublishKey;
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

    private static WriteBuffer.Entry entry(long id, long bytes) {
        return new WriteBuffer.Entry(id, List.of(SampleEvents.incoming("sized", "p")), PublishKey.NONE, 0, bytes,
                null, null);
    }

    private static List<Long> firstIds(List<WriteBuffer.Entry> batch) {
        return batch.stream().map(WriteBuffer.Entry::firstId).toList();
    }
}

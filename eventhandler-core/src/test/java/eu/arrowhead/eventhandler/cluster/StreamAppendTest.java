package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** An append that cannot time its steps gives back the slots it took and answers its publisher. */
class StreamAppendTest {

    /**
     * A clock whose every scheduling fails, as a heap exhausted would make it fail (not thrown as that error here:
     * JUnit rethrows an {@link OutOfMemoryError} past every assertion).
     */
    private static final class FailingClock extends ScheduledThreadPoolExecutor {
        FailingClock() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            throw new IllegalStateException("no room for the step");
        }
    }

    @Test
    void anAppendWhoseStepCannotBeScheduledGivesBackItsSlotsAndIsRefused() {
        FailingClock clock = new FailingClock();
        try {
            PendingAcks slots = new PendingAcks(10, Runnable::run);
            IncomingEvent event = new IncomingEvent("t", "t", null, Map.of(), 0, "{}".getBytes(StandardCharsets.UTF_8));
            StreamPublisher.Request request = new StreamPublisher.Request(List.of(event, event), "key-", 1);
            StreamAppend append = new StreamAppend(null, slots, clock, request,
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            CompletableFuture<StreamAppend.Stored> stored = assertDoesNotThrow(append::start);

            assertEquals(0, slots.taken(), "the slots taken for the append's two events came back");
            ExecutionException refused = assertThrows(ExecutionException.class, stored::get);
            assertInstanceOf(UnavailableException.class, refused.getCause());
        } finally {
            clock.shutdownNow();
        }
    }
}

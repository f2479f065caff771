package eu.arrowhead.eventhandler.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import eu.arrowhead.eventhandler.config.SubscriberLimits;
import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.topic.Hub;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The supervisor's places: a stream that never opened holds none. */
class StreamSupervisorTest {
    private static final long CHARGE = SubscriberLimits.MIN_STREAM_BYTES;

    /**
     * Making a stream or readying its response can fail after its place was taken (a Grizzly response that
     * cannot be suspended): the place must come back, or after {@code subscriber.max-count} such failures
     * every stream would be refused.
     */
    @Test
    void aStreamThatFailsToOpenGivesItsPlaceAndHeapChargeBack() {
        StreamSupervisor supervisor = new StreamSupervisor(new LocalHub(10, 10, 1 << 20, 1 << 20, EventJournal.NONE).hub(),
                new SubscriberLimits(1, 10 * CHARGE, 1 << 20, 1 << 20), Duration.ofSeconds(15), Duration.ofSeconds(30),
                (reason, dropped) -> { });
        for (int attempt = 0; attempt < 3; attempt++) {
            IllegalStateException failed = assertThrows(IllegalStateException.class,
                    () -> supervisor.admit(CHARGE, charge -> {
                        throw new IllegalStateException("the response cannot be suspended");
                    }), "attempt " + attempt + ": the one place is free again");
            assertEquals("the response cannot be suspended", failed.getMessage());
            assertEquals(0, supervisor.streamsHeapCharged());
            assertEquals(0, supervisor.openStreams());
        }
    }
}

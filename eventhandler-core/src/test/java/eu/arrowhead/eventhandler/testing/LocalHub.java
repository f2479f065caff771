package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.store.LocalEventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.time.Duration;
import java.util.List;

/** A hub on a single node's event log, wired as the server wires them, for tests that publish without HTTP. */
public final class LocalHub {
    private final LocalEventLog log;
    private final Hub hub;

    public LocalHub(int maxTopics, int windowEvents, long windowBytes, long windowsTotalBytes, EventJournal journal) {
        log = new LocalEventLog(journal, new IdempotencyKeys(Duration.ofMinutes(1), 16, System::nanoTime),
                Duration.ofSeconds(10));
        hub = new Hub(maxTopics, windowEvents, windowBytes, windowsTotalBytes, log);
        log.deliverTo(hub);
    }

    public Hub hub() {
        return hub;
    }

    public LocalEventLog log() {
        return log;
    }

    /** Publishes as a request without an {@code Idempotency-Key} does; returns the first event's id. */
    public long publish(List<IncomingEvent> events, Publication publication) {
        return log.append(events, PublishKey.NONE, publication).join()[0];
    }
}

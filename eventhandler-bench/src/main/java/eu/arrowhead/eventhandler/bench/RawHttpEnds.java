package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.util.List;
import java.util.function.Consumer;

/**
 * Plain HTTP at both ends, with no client library in between: a raw-socket SSE reader, and Apache HttpClient
 * over a kept-alive connection or, as the original Event Handler's clients did, a new connection per publish.
 */
final class RawHttpEnds implements PublishLoop.Ends {
    /**
     * Up to this many subscribers, each reads on a thread of its own, which wakes as its bytes arrive; more
     * share one selector thread, so that a thousand of them do not put a thousand threads on 2 cores. The
     * peers' ends follow the same rule.
     */
    static final int MAX_READER_THREADS = 16;

    private final boolean newConnectionPerPublish;

    RawHttpEnds(boolean newConnectionPerPublish) {
        this.newConnectionPerPublish = newConnectionPerPublish;
    }

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        return SseReader.open(new SseEndpoint(base, PublishLoop.EVENT_TYPE), log::received, live);
    }

    @Override
    public PublishLoop.Subscription subscribeAll(URI base, List<DeliveryLog> logs, Deadline live) {
        if (logs.size() <= MAX_READER_THREADS) {
            return PublishLoop.Ends.super.subscribeAll(base, logs, live);
        }
        return SubscriberFleet.open(new SseFleetProtocol(new SseEndpoint(base, PublishLoop.EVENT_TYPE),
                logs.stream().<Consumer<SseFrame>>map(log -> log::received).toList()), logs.size(), live);
    }

    @Override
    public PublishLoop.Publisher publisher(URI base) {
        return new HttpPublisher(base, newConnectionPerPublish);
    }
}

package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The cluster's stream as a node's hub sees it, without NATS: the test hands every event to the hub with its id
 * ({@code Hub.deliver}) as the node's feed does; any id past the hub's may still come, and resumes older than its
 * windows are not read.
 */
public final class StreamFedLog implements EventLog {
    @Override
    public CompletableFuture<long[]> append(List<IncomingEvent> events, PublishKey key, Publication publication) {
        throw new AssertionError("the test delivers the stand-in stream's events itself");
    }

    @Override
    public long[] answered(PublishKey key) {
        return null;
    }

    @Override
    public void requireRoom(long bodyBytes) {
    }

    @Override
    public boolean appendWaits() {
        return true;
    }

    @Override
    public long lastId() {
        return 0;
    }

    @Override
    public boolean mayStillDeliver(long id) {
        return true;
    }

    @Override
    public boolean replays() {
        return false;
    }

    @Override
    public void requireReadable(long afterId, long upToId) {
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        throw new UnavailableException("the stand-in stream is not read");
    }
}

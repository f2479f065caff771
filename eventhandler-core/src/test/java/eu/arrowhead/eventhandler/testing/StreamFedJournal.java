package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The cluster's stream as a node's hub sees it, without NATS: it gives the ids, and the node's feed hands every event
 * to the hub ({@code Hub.deliverLogged}); the hub appends nothing, and resumes older than its windows are not read.
 */
public final class StreamFedJournal implements EventJournal {
    @Override
    public long lastId() {
        return 0;
    }

    @Override
    public boolean durable() {
        return false;
    }

    @Override
    public boolean givesIds() {
        return true;
    }

    @Override
    public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, Runnable afterCommit) {
        throw new AssertionError("a hub fed by the stream appends nothing");
    }

    @Override
    public boolean replays() {
        return false;
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        throw new UnavailableException("the stand-in stream is not read");
    }
}

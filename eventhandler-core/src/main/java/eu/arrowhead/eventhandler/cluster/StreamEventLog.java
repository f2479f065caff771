package eu.arrowhead.eventhandler.cluster;

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
 * A cluster node's event log: the JetStream stream every node shares. Its sequence gives the ids. A publish is
 * appended to it ({@link StreamPublisher}) and answered once the stream has it; every node, this one too, hands
 * each event to its hub once it reads it from the stream ({@link StreamFeed}), so the publishing thread delivers
 * nothing. Resumes older than the replay windows read the stream ({@link StreamReader}).
 */
final class StreamEventLog implements EventLog, AutoCloseable {
    private final ClusterConnection connection;
    private final StreamPublisher publisher;
    private final StreamReader reader;
    private final long lastIdAtStart;

    StreamEventLog(ClusterConnection connection, StreamPublisher publisher, StreamReader reader, long lastIdAtStart) {
        this.connection = connection;
        this.publisher = publisher;
        this.reader = reader;
        this.lastIdAtStart = lastIdAtStart;
    }

    @Override
    public CompletableFuture<long[]> append(List<IncomingEvent> events, PublishKey key, Publication publication) {
        return publisher.append(events, key);
    }

    /** The stream answers a repeat in {@link #append}: its duplicate window holds the keys, for every node. */
    @Override
    public long[] answered(PublishKey key) {
        return null;
    }

    @Override
    public void requireRoom(long bodyBytes) {
        requireUp("publish to another node");
    }

    /** It answers once the stream acknowledges, and a send waits while jnats' outgoing queue is full. */
    @Override
    public boolean appendWaits() {
        return true;
    }

    @Override
    public long lastId() {
        return lastIdAtStart;
    }

    /** Any id may be one another node appended and this node has not read yet: the stream is never reset. */
    @Override
    public boolean mayStillDeliver(long id) {
        return true;
    }

    @Override
    public boolean replays() {
        return true;
    }

    @Override
    public void requireReadable(long afterId, long upToId) {
        requireUp("resume on another node");
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        return reader.read(afterId, upToId, topicKeys, filter, maxEvents);
    }

    private void requireUp(String advice) {
        ClusterConnection.CutOff cutOff = connection.cutOff();
        if (cutOff != null) {
            throw new UnavailableException("this node " + cutOff.why() + "; " + advice);
        }
    }

    /** Acknowledgements this node awaits from the stream now. */
    int pendingAcks() {
        return publisher.pendingAcks();
    }

    /** Stops the publisher's clock; the node closes the connection. */
    @Override
    public void close() {
        publisher.close();
    }
}

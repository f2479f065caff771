package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The event store of a cluster node: the shared JetStream stream. It {@linkplain #givesIds gives the ids} (the
 * stream's sequence), so the hub never appends here; publishes go to the stream through {@link StreamPublisher}
 * and reach every node's hub through its {@link StreamFeed}. Resumes older than the replay windows and
 * {@code mgmt/events} read the stream ({@link StreamReader}).
 *
 * <p>Push subscriptions are kept in a key-value bucket every node shares ({@link SharedSubscriptions}).
 */
final class StreamEventStore implements EventStore {
    private final ClusterConnection connection;
    private final StreamReader reader;
    private final SharedSubscriptions subscriptions;
    private final long lastIdAtStart;

    StreamEventStore(ClusterConnection connection, StreamReader reader, SharedSubscriptions subscriptions,
                     long lastIdAtStart) {
        this.connection = connection;
        this.reader = reader;
        this.subscriptions = subscriptions;
        this.lastIdAtStart = lastIdAtStart;
    }

    @Override
    public long lastId() {
        return lastIdAtStart;
    }

    @Override
    public boolean givesIds() {
        return true;
    }

    @Override
    public boolean durable() {
        return true;
    }

    @Override
    public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, Runnable afterCommit) {
        throw new IllegalStateException("in cluster mode events are appended to the stream, not through the hub");
    }

    @Override
    public void requireRoom() {
        requireUp("publish to another node");
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

    @Override
    public QueryPage query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit) {
        return QueryPage.ofLimit(reader.query(topicKeys, fromMillis, toMillis, afterId, limit), limit);
    }

    @Override
    public Status status() {
        boolean up = connection.isUp();
        return new Status("cluster", up ? "UP" : "DOWN", 0, 0, 0, 0, 0, 0, 0, 0, 0,
                connection.cutOffReason(), up ? null : String.valueOf(connection.cutOffSince()), List.of());
    }

    @Override
    public List<PeriodicTask> periodicTasks() {
        return List.of();
    }

    @Override
    public boolean drain(Duration timeout) {
        // Nothing is buffered here: a publish is answered once the stream has it.
        return true;
    }

    @Override
    public void close() {
        // The node closes the connection.
    }

    @Override
    public List<StoredSubscription> loadSubscriptions() {
        return subscriptions.loadSubscriptions();
    }

    @Override
    public void saveSubscription(StoredSubscription subscription) {
        subscriptions.saveSubscription(subscription);
    }

    @Override
    public void deleteSubscription(long id) {
        subscriptions.deleteSubscription(id);
    }

    /** In cluster mode the Authorization system's answers are kept in each node's memory only. */
    @Override
    public AuthorizationStore authorizationAnswers() {
        return AuthorizationStore.NONE;
    }

    @Override
    public long nextSubscriptionId(long lastId) {
        return subscriptions.nextSubscriptionId(lastId);
    }

    private void requireUp(String advice) {
        if (!connection.isUp()) {
            throw new UnavailableException(connection.cutOffReason() + "; " + advice);
        }
    }
}

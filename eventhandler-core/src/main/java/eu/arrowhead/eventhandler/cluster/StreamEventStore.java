package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.store.AuthorizationStore;
import eu.arrowhead.eventhandler.store.EventStore;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What a cluster node keeps besides its event log ({@link StreamEventLog}): {@code mgmt/events} reads the shared
 * JetStream stream ({@link StreamReader}); its state is the connection's.
 *
 * <p>Push subscriptions are kept in a key-value bucket every node shares ({@link SharedSubscriptions}).
 */
final class StreamEventStore implements EventStore {
    private final ClusterConnection connection;
    private final StreamReader reader;
    private final SharedSubscriptions subscriptions;

    StreamEventStore(ClusterConnection connection, StreamReader reader, SharedSubscriptions subscriptions) {
        this.connection = connection;
        this.reader = reader;
        this.subscriptions = subscriptions;
    }

    @Override
    public QueryPage query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit) {
        return QueryPage.ofLimit(reader.query(topicKeys, fromMillis, toMillis, afterId, limit), limit);
    }

    @Override
    public Status status() {
        ClusterConnection.CutOff cutOff = connection.cutOff();
        return new Status("cluster", cutOff == null ? "UP" : "DOWN", 0, 0, 0, 0, 0, 0, 0, 0, 0,
                cutOff == null ? null : cutOff.why(), cutOff == null ? null : cutOff.since().toString(), List.of());
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
}

package eu.arrowhead.eventhandler.node;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.publish.SharedStream;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.DatabaseEventStore;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.topic.Hub;
import java.io.IOException;
import java.sql.SQLException;

/**
 * A single node: its event log and push subscriptions in its database ({@link DatabaseEventStore}: H2 or
 * MySQL/MariaDB), or nowhere with {@code store.mode=off}. Publishes go to the hub at once, and each push
 * subscription is a subscriber of the hub.
 */
public final class LocalBackend implements NodeBackend {
    private final EventStore store;

    private LocalBackend(EventStore store) {
        this.store = store;
    }

    /**
     * Opens the database, unless {@code store.mode=off}.
     *
     * @throws IOException if it cannot be opened, saying what to do
     */
    public static LocalBackend open(EventHandlerConfig config) throws IOException {
        if (config.storeMode() == EventHandlerConfig.StoreMode.OFF) {
            return new LocalBackend(null);
        }
        try {
            return new LocalBackend(DatabaseEventStore.open(config));
        } catch (SQLException e) {
            throw new IOException("the event store at " + config.storeUrl() + " cannot be opened: "
                    + e.getMessage() + " (start the database, fix store.url, or set store.mode=off)", e);
        }
    }

    @Override
    public EventStore store() {
        return store;
    }

    @Override
    public SharedStream stream() {
        return null;
    }

    /** A single node has no other node to tell. */
    @Override
    public void shareAuthorizationUpdates(PublisherAuthorization publishers) {
    }

    @Override
    public PushSubscriptions pushSubscriptions(Hub hub, Authorizer authorizer, PushSender sender, PushConfig config) {
        PushSubscriptions subscriptions = new PushSubscriptions(hub, store == null ? SubscriptionStore.NONE : store,
                authorizer, sender, config);
        subscriptions.load();
        return subscriptions;
    }

    /** Nothing but the node's own publishes feeds its hub. */
    @Override
    public void start(Hub hub, StreamSupervisor supervisor) {
    }

    @Override
    public NodeHealth health() {
        return new NodeHealth(store == null ? null : store.status(), null);
    }

    @Override
    public void close() {
        if (store != null) {
            store.close();
        }
    }
}

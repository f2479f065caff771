package eu.arrowhead.eventhandler.node;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.LocalDeadLetterLists;
import eu.arrowhead.eventhandler.push.LogCursors;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.DatabaseEventStore;
import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.store.LocalEventLog;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A single node: its event log ({@link LocalEventLog}: its own sequence of ids) and push subscriptions in its
 * database ({@link DatabaseEventStore}: H2 or MySQL/MariaDB), or nowhere with {@code store.mode=off}. Each push
 * subscription delivers from its own cursor in the log ({@link LogCursors}), or, with {@code store.mode=off},
 * from a bounded queue as a subscriber of the hub.
 */
public final class LocalBackend implements NodeBackend {
    private final LocalEventLog log;
    private final DatabaseEventStore store;
    /** Most events a push cursor reads from the log at once ({@code store.replay-page-events}). */
    private final int pushPageEvents;
    /** Set once push starts, with a store; read by metric scrapes. */
    private volatile LogCursors pushCursors;

    private LocalBackend(LocalEventLog log, DatabaseEventStore store, int pushPageEvents) {
        this.log = log;
        this.store = store;
        this.pushPageEvents = pushPageEvents;
    }

    /**
     * Opens the database, unless {@code store.mode=off}.
     *
     * @throws IOException if it cannot be opened, saying what to do
     */
    public static LocalBackend open(EventHandlerConfig config) throws IOException {
        IdempotencyKeys keys = new IdempotencyKeys(config.idempotencyWindow(), config.idempotencyMaxKeys(),
                System::nanoTime);
        if (config.storeMode() == EventHandlerConfig.StoreMode.OFF) {
            return new LocalBackend(new LocalEventLog(EventJournal.NONE, keys, config.storeSyncTimeout()), null, 0);
        }
        try {
            DatabaseEventStore store = DatabaseEventStore.open(config);
            return new LocalBackend(new LocalEventLog(store, keys, config.storeSyncTimeout()), store,
                    config.storeReplayPageEvents());
        } catch (SQLException e) {
            throw new IOException("the event store at " + config.storeUrl() + " cannot be opened: "
                    + e.getMessage() + " (start the database, fix store.url, or set store.mode=off)", e);
        }
    }

    @Override
    public EventLog log() {
        return log;
    }

    @Override
    public EventStore store() {
        return store;
    }

    @Override
    public IdempotencyKeys idempotencyKeys() {
        return log.idempotencyKeys();
    }

    /** A single node has no other node to tell. */
    @Override
    public Runnable shareAuthorizationUpdates(PublisherAuthorization publishers) {
        return () -> {
        };
    }

    @Override
    public PushSubscriptions pushSubscriptions(Hub hub, Authorizer authorizer, PushSender sender, PushConfig config) {
        PushSubscriptions subscriptions;
        if (store == null) {
            subscriptions = new PushSubscriptions(hub, SubscriptionStore.NONE, authorizer, sender, config);
        } else {
            pushCursors = LogCursors.open(hub, log, store, sender, config, pushPageEvents);
            subscriptions = pushCursors.subscriptions(authorizer);
        }
        subscriptions.load();
        return subscriptions;
    }

    /** The node's own publishes are all that feeds its hub. */
    @Override
    public void start(Hub hub, StreamSupervisor supervisor) {
        log.deliverTo(hub);
    }

    @Override
    public boolean drain(Duration grace) throws InterruptedException {
        log.close();
        boolean written = store == null || store.drain(grace);
        LogCursors cursors = pushCursors;
        if (cursors != null) {
            cursors.stop();
        }
        return written;
    }

    @Override
    public NodeHealth health() {
        return new NodeHealth(store == null ? null : store.status(), null);
    }

    @Override
    public LogCursors pushCursors() {
        return pushCursors;
    }

    @Override
    public DeadLetterLists deadLetterLists() {
        LogCursors cursors = pushCursors;
        return cursors == null ? null : new LocalDeadLetterLists(cursors);
    }

    /** The push cursors are saved before the store, which keeps them, closes. */
    @Override
    public void close() {
        LogCursors cursors = pushCursors;
        if (cursors != null) {
            cursors.close();
        }
        if (store != null) {
            store.close();
        }
    }
}

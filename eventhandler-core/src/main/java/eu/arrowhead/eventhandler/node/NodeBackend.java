package eu.arrowhead.eventhandler.node;

import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.publish.SharedStream;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.topic.Hub;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;

/**
 * What a node stands on, below its hub and its front door: the event log, where push subscriptions are kept and
 * how their events reach them, and what it says of its health. A single node ({@link LocalBackend}) keeps them in
 * its database, or nowhere with {@code store.mode=off}; a node of a cluster ({@link ClusterBackend}) in the
 * cluster's NATS stream and bucket, shared with the other nodes. The server opens one before anything else and
 * closes it last.
 */
public interface NodeBackend extends AutoCloseable {

    /** The log for {@code mgmt/events}, the store's drain and tasks; {@code null} when there is none. */
    EventStore store();

    /** The log the hub appends to and replays from: {@link EventJournal#NONE} when there is none. */
    default EventJournal journal() {
        EventStore store = store();
        return store == null ? EventJournal.NONE : store;
    }

    /** Where the Authorization system's last answers are kept. */
    default AuthorizationStore authorizationAnswers() {
        EventStore store = store();
        return store == null ? AuthorizationStore.NONE : store.authorizationAnswers();
    }

    /** Where publishes go before they reach the hub; {@code null} when they go to the hub at once. */
    SharedStream stream();

    /**
     * Lets the authorization updates this node receives reach every node that shares its subscriptions, and
     * theirs reach {@code publishers}.
     *
     * @return stops taking the other nodes' updates; run before {@code publishers} closes
     */
    Runnable shareAuthorizationUpdates(PublisherAuthorization publishers);

    /**
     * The push subscriptions, kept in this backend's store and delivered its way, with the stored ones loaded.
     *
     * @throws IOException if they cannot be read
     */
    PushSubscriptions pushSubscriptions(Hub hub, Authorizer authorizer, PushSender sender, PushConfig config)
            throws IOException;

    /**
     * Starts what feeds the hub from elsewhere, once the node listens.
     *
     * @throws IOException if it cannot
     */
    void start(Hub hub, StreamSupervisor supervisor) throws IOException;

    /**
     * The stop begins: the log writes what it was given, and push starts no new POST (what was not acknowledged is
     * sent after the next start). Waits for the log at most {@code grace}.
     *
     * @return whether the log wrote everything it was given
     * @throws InterruptedException if the stop is interrupted while it waits
     */
    boolean drain(Duration grace) throws InterruptedException;

    /** Read for {@code mgmt/health} and the metrics. */
    NodeHealth health();

    /**
     * Ids each push subscription's own cursor passed that the log no longer held, by subscription id; empty where
     * push keeps no cursor of its own (cluster mode's cursors are the stream's consumers, {@code store.mode=off}
     * has a queue).
     */
    default Map<Long, Long> pushCursorSkippedIds() {
        return Map.of();
    }

    /** Lets the log and every connection go; the last thing a stop does. */
    @Override
    void close();
}

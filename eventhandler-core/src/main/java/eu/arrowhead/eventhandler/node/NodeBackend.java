package eu.arrowhead.eventhandler.node;

import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.LogCursors;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.IdempotencyKeys;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import java.io.IOException;
import java.time.Duration;

/**
 * What a node stands on, below its hub and its front door: the event log, where push subscriptions are kept and
 * how their events reach them, and what it says of its health. A single node ({@link LocalBackend}) keeps them in
 * its database, or nowhere with {@code store.mode=off}; a node of a cluster ({@link ClusterBackend}) in the
 * cluster's NATS stream and bucket, shared with the other nodes. The server opens one before anything else and
 * closes it last.
 */
public interface NodeBackend extends AutoCloseable {

    /** The event log: where publishes go, what gives the ids and hands the events to the hub, what resumes read. */
    EventLog log();

    /** What {@code mgmt/events}, health and the store's tasks read besides the log; {@code null} when there is none. */
    EventStore store();

    /** Where the Authorization system's last answers are kept. */
    default AuthorizationStore authorizationAnswers() {
        EventStore store = store();
        return store == null ? AuthorizationStore.NONE : store.authorizationAnswers();
    }

    /**
     * The answers to keyed publishes, where this node keeps them (for the metrics); {@code null} where the log
     * keeps them itself (a cluster's stream, in its duplicate window).
     */
    default IdempotencyKeys idempotencyKeys() {
        return null;
    }

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
     * Lets the log hand its events to the hub from now on, before the node listens; in a cluster also lets an
     * outage refuse and end what the node serves.
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
     * The push subscriptions' own cursors in the log, once {@link #pushSubscriptions} made them: their skipped ids,
     * dead letters and pauses; {@code null} where push keeps no cursor of its own (cluster mode's cursors are the
     * stream's consumers, {@code store.mode=off} has a queue).
     */
    default LogCursors pushCursors() {
        return null;
    }

    /**
     * The push subscriptions' dead-letter lists, once {@link #pushSubscriptions} made their deliveries; {@code null}
     * where no delivery sets events aside ({@code store.mode=off}).
     */
    default DeadLetterLists deadLetterLists() {
        return null;
    }

    /** Lets the log and every connection go; the last thing a stop does. */
    @Override
    void close();
}

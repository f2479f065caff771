package eu.arrowhead.eventhandler.node;

import eu.arrowhead.eventhandler.cluster.ClusterNode;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * A node of a cluster ({@link ClusterNode}, cluster mode): the shared NATS stream is its event log and where its
 * publishes go, which feeds its hub; push subscriptions are kept in the bucket every node shares and each is
 * delivered by its cursor in the stream.
 */
public final class ClusterBackend implements NodeBackend {
    private final ClusterNode node;

    private ClusterBackend(ClusterNode node) {
        this.node = node;
    }

    /**
     * Joins the cluster as {@code cluster.node-name}, or as the host name and process id.
     *
     * @throws IOException if no NATS server answers or the stream cannot be set up
     */
    public static ClusterBackend join(EventHandlerConfig config) throws IOException {
        return new ClusterBackend(ClusterNode.join(config.cluster(), nodeName(config)));
    }

    private static String nodeName(EventHandlerConfig config) {
        if (!config.cluster().nodeName().isEmpty()) {
            return config.cluster().nodeName();
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "localhost";
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    @Override
    public EventStore store() {
        return node.store();
    }

    @Override
    public EventLog log() {
        return node.log();
    }

    @Override
    public Runnable shareAuthorizationUpdates(PublisherAuthorization publishers) {
        return node.shareAuthorizationUpdates(publishers);
    }

    @Override
    public PushSubscriptions pushSubscriptions(Hub hub, Authorizer authorizer, PushSender sender, PushConfig config)
            throws IOException {
        PushSubscriptions subscriptions = new PushSubscriptions(node.store(), authorizer, sender, config,
                node.pushDeliveries(sender, config));
        // Watched before they are loaded, so that no other node's change falls between.
        node.watchSubscriptions(subscriptions);
        subscriptions.load();
        return subscriptions;
    }

    /** The dead letters every node shares. */
    @Override
    public DeadLetterLists deadLetterLists() {
        return node.deadLetters();
    }

    /** Feeds the hub from the stream, and lets outages refuse and end what this node serves. */
    @Override
    public void start(Hub hub, StreamSupervisor supervisor) throws IOException {
        node.start(hub, supervisor);
    }

    /** The stream keeps every cursor: a node that stops leaves nothing of push behind. */
    @Override
    public boolean drain(Duration grace) throws InterruptedException {
        return node.store().drain(grace);
    }

    @Override
    public NodeHealth health() {
        return new NodeHealth(node.store().status(), node.view());
    }

    @Override
    public void close() {
        node.close();
    }
}

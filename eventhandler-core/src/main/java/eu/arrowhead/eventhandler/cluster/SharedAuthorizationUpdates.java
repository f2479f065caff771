package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode: the Authorization system sends an authorization update to one node, the one it found in the
 * Service Registry. That node tells the others over core NATS, so that every node's push subscriptions and open
 * streams follow the new rules, not only its own.
 *
 * <p>At most once, and not waited for: the node that received the update answers it once its own subscribers
 * follow the new rules; the others follow as soon as they have asked the Authorization system again. A node cut
 * off from NATS at that moment misses the update and catches up at its next recheck
 * ({@code security.authorization.recheck-seconds}).
 */
final class SharedAuthorizationUpdates {
    private static final Logger LOG = LoggerFactory.getLogger(SharedAuthorizationUpdates.class);

    private SharedAuthorizationUpdates() {
    }

    /**
     * Forwards the updates {@code publishers} receives to the other nodes, and puts theirs in effect here, on a
     * dispatcher thread of its own (the checks take a while).
     *
     * @param stream the cluster's stream, whose nodes share the updates
     * @return stops taking the other nodes' updates: before {@code publishers} closes, so that none reaches it
     *         while it stops
     */
    static Runnable share(Connection nats, String stream, String nodeName, PublisherAuthorization publishers) {
        String subject = "_EH_AUTHUPDATE." + stream;
        byte[] sender = nodeName.getBytes(StandardCharsets.UTF_8);
        Dispatcher dispatcher = nats.createDispatcher(message -> {
            String from = new String(message.getData(), StandardCharsets.UTF_8);
            if (!from.equals(nodeName)) {
                LOG.debug("an authorization update forwarded by node {}", from);
                publishers.updatedElsewhere();
            }
        });
        dispatcher.subscribe(subject);
        publishers.forwardUpdatesTo(() -> forward(nats, subject, sender));
        return () -> nats.closeDispatcher(dispatcher);
    }

    private static void forward(Connection nats, String subject, byte[] sender) {
        try {
            nats.publish(subject, sender);
        } catch (RuntimeException e) {
            LOG.warn("the other nodes cannot be told of an authorization update ({}); they follow it at their next"
                    + " recheck", e.getMessage());
        }
    }
}

package eu.arrowhead.eventhandler.node;

import eu.arrowhead.eventhandler.cluster.ClusterNode;
import eu.arrowhead.eventhandler.store.EventStore;

/**
 * What a backend says of itself, read anew for each {@code mgmt/health} request and each scrape of the metrics.
 *
 * @param log     the event log's state; {@code null} when there is none ({@code store.mode=off})
 * @param cluster the node's view of its cluster; {@code null} on a single node
 */
public record NodeHealth(EventStore.Status log, ClusterNode.View cluster) {

    /**
     * Whether everything works: the log writes and can read every event it holds, and the node has NATS. Events
     * are still delivered live while it does not.
     */
    public boolean isUp() {
        return (log == null || log.isUp() && log.isReadable()) && (cluster == null || cluster.isUp());
    }

    /** Why the node is not UP although its log writes (H2's file is damaged); {@code null} otherwise. */
    public String damage() {
        return log == null || log.isReadable() ? null : "the event log's file is damaged: the events with ids "
                + String.join(", ", log.damagedRanges()) + " cannot be read (resumes across them are told)";
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.topic.Hub;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import java.io.IOException;
import java.time.Duration;

/**
 * Notices a feed that has stopped while the stream went on. The feed's ordered consumer lives on one NATS server;
 * when that server dies while this node stays connected to another, nothing tells the node, and the client library
 * notices only after several missed heartbeats: measured at up to 24 s without deliveries in ClusterFailoverIT.
 * Once a second this asks the stream for its last sequence; a hub that has delivered nothing for
 * {@link #STALL} while the stream holds later events has a stalled feed, which the node then restarts.
 */
final class FeedWatch {
    private static final long CHECK_EVERY_NANOS = Duration.ofSeconds(1).toNanos();
    static final Duration STALL = Duration.ofSeconds(2);

    private final JetStreamManagement management;
    private final String stream;
    private final Hub hub;
    private long lastCheckNanos;
    private long lastDelivered = -1;
    /** Since when the hub is behind the stream without delivering; 0 while it is not. */
    private long behindSinceNanos;

    FeedWatch(JetStreamManagement management, String stream, Hub hub) {
        this.management = management;
        this.stream = stream;
        this.hub = hub;
    }

    /** Whether the feed has stalled; called often, asks the stream at most once a second. One thread only. */
    boolean stalled() {
        long now = System.nanoTime();
        if (now - lastCheckNanos < CHECK_EVERY_NANOS) {
            return false;
        }
        lastCheckNanos = now;
        long delivered = hub.lastId();
        long streamLast;
        try {
            streamLast = management.getStreamInfo(stream).getStreamState().getLastSequence();
        } catch (IOException | JetStreamApiException e) {
            return false; // the stream cannot answer now (electing a leader): nothing to compare with
        }
        boolean stuck = streamLast > delivered && delivered == lastDelivered;
        lastDelivered = delivered;
        if (!stuck) {
            behindSinceNanos = 0;
            return false;
        }
        if (behindSinceNanos == 0) {
            behindSinceNanos = now;
        }
        if (now - behindSinceNanos >= STALL.toNanos()) {
            behindSinceNanos = 0;
            return true;
        }
        return false;
    }
}

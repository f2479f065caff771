package eu.arrowhead.eventhandler.cluster;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices a feed that has stopped while the stream went on. The feed's ordered consumer lives on one NATS server;
 * when that server dies or freezes while this node stays connected to another, nothing tells the node, and the
 * client library notices only after several missed heartbeats: measured at up to 24 s without deliveries in
 * ClusterFailoverIT. Once a second this asks the stream for its last sequence and its leader:
 * <ul>
 *   <li>when the leader has moved, the feed is read again at once: the leader moves when its server failed, and a
 *       feed whose consumer lived there never delivers again (ClusterPartitionIT: one node's feed resumed 3 s after
 *       the new leader, where the other nodes' did at once). A restart costs one new consumer, and a feed that
 *       worked goes on until the new one is made;</li>
 *   <li>a hub that has delivered nothing for {@link #STALL} while the stream holds later events has a stalled
 *       feed (its consumer lived on a server that failed without leading the stream).</li>
 * </ul>
 */
final class FeedWatch {
    private static final Logger LOG = LoggerFactory.getLogger(FeedWatch.class);
    private static final long CHECK_EVERY_NANOS = Duration.ofSeconds(1).toNanos();
    static final Duration STALL = Duration.ofSeconds(2);

    private final JetStreamManagement management;
    private final String stream;
    /** The last sequence the feed has seen: delivered, or skipped as not an event. */
    private final LongSupplier lastSeen;
    private long lastCheckNanos;
    private long lastDelivered = -1;
    /** Since when the hub is behind the stream without delivering; 0 while it is not. */
    private long behindSinceNanos;
    /** The server that led the stream at the last look; null before one answered. */
    private String lastLeader;
    /** The stream's last sequence at the last look that was answered; 0 before one was. */
    private long streamLastId;

    FeedWatch(JetStreamManagement management, String stream, LongSupplier lastSeen) {
        this.management = management;
        this.stream = stream;
        this.lastSeen = lastSeen;
    }

    /**
     * Why the feed should be read again, or {@code null} while it need not; called often, asks the stream at most
     * once a second. One thread only.
     */
    String restartReason() {
        long now = System.nanoTime();
        if (now - lastCheckNanos < CHECK_EVERY_NANOS) {
            return null;
        }
        lastCheckNanos = now;
        long delivered = lastSeen.getAsLong();
        StreamInfo info;
        try {
            info = management.getStreamInfo(stream);
        } catch (IOException | JetStreamApiException e) {
            // The stream cannot answer now (electing a leader): nothing to compare with.
            LOG.debug("the stream {} does not describe itself now: {}", stream, e.getMessage());
            return null;
        }
        streamLastId = Math.max(streamLastId, info.getStreamState().getLastSequence());
        String leader = info.getClusterInfo() == null ? null : info.getClusterInfo().getLeader();
        String formerLeader = lastLeader;
        if (leader != null) {
            lastLeader = leader;
        }
        boolean progressed = delivered != lastDelivered;
        lastDelivered = delivered;
        if (formerLeader != null && leader != null && !leader.equals(formerLeader)) {
            behindSinceNanos = 0;
            return "the stream's leader moved from " + formerLeader + " to " + leader;
        }
        boolean stuck = streamLastId > delivered && !progressed;
        if (!stuck) {
            behindSinceNanos = 0;
            return null;
        }
        if (behindSinceNanos == 0) {
            behindSinceNanos = now;
        }
        if (now - behindSinceNanos >= STALL.toNanos()) {
            behindSinceNanos = 0;
            return "it has delivered nothing for " + STALL.toSeconds() + " s while the stream holds later events";
        }
        return null;
    }

    /**
     * The stream's last sequence as this watch last saw it, whether or not the feed has delivered it: a stalled
     * feed must not hide the stream's progress from the push cursors' watch ({@link CursorWatch}).
     */
    long streamLastId() {
        return streamLastId;
    }
}

package eu.arrowhead.eventhandler.cluster;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
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
 *       feed (its consumer lived on a server that failed without leading the stream). A feed that reads one
 *       event type is behind only while the stream's last message of that type is later than what it delivered;
 *       while it is not, the hub is told it has all it wants up to the stream's last sequence
 *       ({@link StreamFeed#skipTo}), so that a resume from there is served without waiting for the next event of
 *       the type.</li>
 * </ul>
 */
final class FeedWatch {
    private static final Logger LOG = LoggerFactory.getLogger(FeedWatch.class);
    private static final long CHECK_EVERY_NANOS = Duration.ofSeconds(1).toNanos();
    /**
     * A look asked for at once ({@link #lookNow}) still waits this long after the last: any client can ask for
     * one, with a resume from an id this node has not reached, and each costs JetStream two requests. A feed that
     * reads part of the stream is looked at this often anyway: how far the stream has got is what a first
     * subscriber to a type it did not read counts as old news, and what a resume ahead of the feed is checked
     * against (ten requests a second).
     */
    private static final long LOOK_NOW_GAP_NANOS = Duration.ofMillis(200).toNanos();
    static final Duration STALL = Duration.ofSeconds(2);

    private final JetStreamManagement management;
    private final String stream;
    private final StreamFeed feed;
    private long lastCheckNanos;
    /** Set from other threads: the next call looks whenever the last look was. */
    private volatile boolean lookNow;
    private boolean directGetsSaid;
    private long lastDelivered = -1;
    /** Since when the hub is behind the stream without delivering; 0 while it is not. */
    private long behindSinceNanos;
    /** The server that led the stream at the last look; null before one answered. */
    private String lastLeader;
    /** The stream's last sequence at the last look that was answered; 0 before one was. */
    private long streamLastId;

    FeedWatch(JetStreamManagement management, String stream, StreamFeed feed) {
        this.management = management;
        this.stream = stream;
        this.feed = feed;
    }

    /**
     * Why the feed should be read again, or {@code null} while it need not; called often, asks the stream at most
     * once a second. One thread only.
     */
    String restartReason() {
        long now = System.nanoTime();
        StreamFeed.Reading reading = feed.reading();
        boolean filtered = reading != null && reading.filtered();
        if (now - lastCheckNanos < (lookNow || filtered ? LOOK_NOW_GAP_NANOS : CHECK_EVERY_NANOS)) {
            return null;
        }
        lookNow = false;
        lastCheckNanos = now;
        long delivered = feed.lastSeenId();
        StreamInfo info;
        try {
            info = management.getStreamInfo(stream);
        } catch (IOException | JetStreamApiException e) {
            // The stream cannot answer now (electing a leader): nothing to compare with.
            LOG.debug("the stream {} does not describe itself now: {}", stream, e.getMessage());
            return null;
        }
        streamLastId = Math.max(streamLastId, info.getStreamState().getLastSequence());
        feed.streamReached(streamLastId);
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
        boolean behind;
        if (filtered) {
            if (info.getConfiguration().getAllowDirect()) {
                // Turned on since the start (StreamSetup turns it off): a lagging replica could answer the question
                // below with an older message, and the hub would skip past a newer one.
                if (!directGetsSaid) {
                    directGetsSaid = true;
                    LOG.warn("the stream {} allows direct gets again: this node no longer moves its last id past the"
                            + " events of types it does not read until they are off (restart the node)", stream);
                }
                return null;
            }
            Boolean behindOnItsSubject = behindOnItsSubject(reading, info.getStreamState().getLastSequence());
            if (behindOnItsSubject == null) {
                return null; // cannot tell now: the stall's clock goes on
            }
            behind = behindOnItsSubject;
        } else {
            behind = streamLastId > delivered;
        }
        boolean stuck = behind && !progressed;
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
     * Whether the stream holds a message of the feed's subject that the feed has not delivered, or {@code null} if
     * it cannot tell now; if not, the hub has all it wants up to {@code streamLast}, which the stream's description
     * gave before this asks.
     */
    private Boolean behindOnItsSubject(StreamFeed.Reading reading, long streamLast) {
        long wanted;
        try {
            wanted = StreamReader.lastOfSubject(management, stream, reading.subject());
        } catch (IOException | JetStreamApiException e) {
            LOG.debug("the stream {} does not tell its last message on {} now: {}", stream, reading.subject(),
                    e.getMessage());
            return null;
        }
        // Read after the question: what the feed delivered then covers every message of the subject up to streamLast.
        if (wanted > feed.lastSeenId()) {
            return true;
        }
        feed.skipTo(reading, streamLast);
        return false;
    }

    /** Makes the next {@link #restartReason} ask the stream, however recently it did. */
    void lookNow() {
        lookNow = true;
    }

    /**
     * The stream's last sequence as this watch last saw it, whether or not the feed has delivered it: a stalled
     * feed must not hide the stream's progress from the push cursors' watch ({@link CursorWatch}).
     */
    long streamLastId() {
        return streamLastId;
    }
}

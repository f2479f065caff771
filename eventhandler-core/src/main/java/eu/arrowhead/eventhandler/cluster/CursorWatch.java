package eu.arrowhead.eventhandler.cluster;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices push cursors whose pulls are lost. A pull waits on the NATS server that leads the cursor; when that
 * server dies or the cursor's leadership moves, the pull is gone, the cursor shows events pending, none in flight
 * and no pull waiting, and nothing tells the nodes: the client library asks again only at its heartbeat alarm,
 * measured at about 90 s. Once a second this asks each cursor of this node that may have work (the stream grew
 * since it was last seen idle, or it had events pending) how it stands, and pulls again
 * ({@link PushCursor#pullAgain}) when
 * <ul>
 *   <li>its leader moved since the last look: the pulls waited on the old leader. Waiting for the stall instead
 *       held a subscriber's events 3-4 s after JetStream had its leaders back (ClusterConsumerRecoveryIT). It also
 *       acknowledges again the last event it acknowledged ({@link PushCursor#acknowledgeAgain}), and so looks at a
 *       cursor for an acknowledgement wait after each acknowledgement, even when nothing more is published;</li>
 *   <li>this node's last pull could not be opened (its connection was closing, or the cursor could not be set up
 *       again when the subscription followed its topic);</li>
 *   <li>it is seen stalled at two looks in a row (a second apart): events pending, none in flight, no pull open
 *       anywhere. One look could fall between an event's acknowledgement and the pull that follows it; a third
 *       look, as before, only added a second to a stall.</li>
 * </ul>
 * The question goes to the cursor's leader, with a short timeout so that a dead leader does not hold the other
 * cursors' checks.
 */
final class CursorWatch {
    private static final Logger LOG = LoggerFactory.getLogger(CursorWatch.class);
    private static final long CHECK_EVERY_NANOS = Duration.ofSeconds(1).toNanos();

    private final JetStreamManagement management;
    private final String stream;
    private final Map<PushCursor, Seen> cursors = new ConcurrentHashMap<>();
    private long lastCheckNanos;

    /** What the last check saw of one cursor. */
    private static final class Seen {
        /** The stream's last id when the cursor was last seen with nothing pending; -1 before. */
        long idleAt = -1;
        /** Whether the last look saw it stalled. */
        boolean stalled;
        /** The server that led the cursor at the last look; null before one answered. */
        String leader;
    }

    /** @param management asks with a short timeout (a fraction of {@code cluster.timeout-seconds}) */
    CursorWatch(JetStreamManagement management, String stream) {
        this.management = management;
        this.stream = stream;
    }

    void add(PushCursor cursor) {
        cursors.put(cursor, new Seen());
    }

    /** After a reconnect: every pull of this node may have gone with the server it was on. */
    void pullAllAgain() {
        cursors.keySet().forEach(PushCursor::pullAgain);
    }

    /**
     * Called often on the node's thread; checks at most once a second. {@code streamLastId}: the stream's last id as
     * this node knows it, from its feed or from the stream itself, whichever is further.
     */
    void check(long streamLastId) {
        long now = System.nanoTime();
        if (now - lastCheckNanos < CHECK_EVERY_NANOS) {
            return;
        }
        lastCheckNanos = now;
        cursors.keySet().removeIf(PushCursor::closed);
        cursors.forEach((cursor, seen) -> {
            if (!seen.stalled && seen.idleAt >= streamLastId && !cursor.acknowledgedLately()) {
                // Nothing published since it was idle: nothing to pull, and no acknowledgement that a move of its
                // leader could lose.
                return;
            }
            if (!cursor.shouldPull()) {
                seen.stalled = false; // paused, or between topics: not this watch's business
                seen.leader = null; // its next pull asks whoever leads then
                return;
            }
            if (!cursor.pulling()) {
                cursor.pullAgain(); // its last try failed
                return;
            }
            ConsumerInfo info;
            try {
                info = management.getConsumerInfo(stream, cursor.name());
            } catch (IOException | JetStreamApiException e) {
                return; // no leader to answer now: asked again in a second
            }
            if (leaderMoved(seen, info)) {
                seen.stalled = false;
                cursor.pullAgain();
                cursor.acknowledgeAgain();
                return;
            }
            if (info.getNumPending() == 0 && info.getNumAckPending() == 0) {
                seen.idleAt = streamLastId;
                seen.stalled = false;
                return;
            }
            if (info.getNumAckPending() > 0 || info.getNumWaiting() > 0) {
                seen.stalled = false; // an event in flight, or a pull open: it moves
                return;
            }
            if (!seen.stalled) {
                seen.stalled = true;
            } else {
                LOG.warn("push cursor {} has {} events pending and no pull open; pulling again", cursor.name(),
                        info.getNumPending());
                seen.stalled = false;
                cursor.pullAgain();
            }
        });
    }

    private static boolean leaderMoved(Seen seen, ConsumerInfo info) {
        String leader = info.getClusterInfo() == null ? null : info.getClusterInfo().getLeader();
        if (leader == null) {
            return false;
        }
        String former = seen.leader;
        seen.leader = leader;
        if (former == null || former.equals(leader)) {
            return false;
        }
        LOG.debug("push cursor {}'s leader moved from {} to {}; pulling again", info.getName(), former, leader);
        return true;
    }
}

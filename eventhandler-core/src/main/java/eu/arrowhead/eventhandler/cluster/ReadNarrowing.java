package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.ReadScope;
import java.time.Duration;
import java.util.Set;

/**
 * Decides when a node's feed may read less of the stream: once the event types its SSE subscribers want have
 * been one (what a consumer of nats-server 2.9 can filter on) for {@link #SETTLED}, the hub narrows its
 * {@link ReadScope} to it. Without subscribers the node keeps reading what it read: the next subscriber most likely
 * wants the same type, and finds the node reading it, where a node reading nothing would have to widen for it. A subscriber to another type widens it again at once ({@link Hub#subscribe}); the wait
 * keeps a type that subscribers leave and come back to from costing a new consumer each time. Push subscriptions
 * read the stream through cursors of their own and want nothing from the feed. One thread only.
 */
final class ReadNarrowing {
    static final Duration SETTLED = Duration.ofSeconds(5);
    /** Asking the hub walks its topics under its lock when few have subscribers: not at every tick. */
    private static final long LOOK_EVERY_NANOS = Duration.ofSeconds(1).toNanos();

    private final Hub hub;
    /** The narrower scope seen at the last look, or {@code null}; since {@link #seenSinceNanos}. */
    private Set<String> seen;
    private long seenSinceNanos;
    private long lastLookNanos;
    private boolean looked;

    ReadNarrowing(Hub hub) {
        this.hub = hub;
    }

    /** @return whether the hub now reads a narrower scope, which the feed must be restarted to read */
    boolean narrowIfSettled(long nowNanos) {
        if (looked && nowNanos - lastLookNanos < LOOK_EVERY_NANOS) {
            return false;
        }
        looked = true;
        lastLookNanos = nowNanos;
        Set<String> wanted = hub.subscribedTopicsIfFew();
        if (wanted == null || wanted.isEmpty() || wanted.equals(hub.readScope().topicKeys())) {
            seen = null;
            return false;
        }
        if (!wanted.equals(seen)) {
            seen = wanted;
            seenSinceNanos = nowNanos;
            return false;
        }
        if (nowNanos - seenSinceNanos < SETTLED.toNanos()) {
            return false;
        }
        seen = null;
        return hub.narrowReads(wanted) != null;
    }
}

package eu.arrowhead.eventhandler.cluster;

import java.time.Duration;

/**
 * Tells whether this process was just frozen (SIGSTOP, a VM paused, a swap storm): a thread that does nothing else
 * ticks it five times a second, and a tick that comes long after the last one, or a question asked while none came
 * for long, means the process stood still. The monotonic clock runs on while a process is stopped. A push cursor asks before
 * it sends an event that may have waited through the freeze: the stream may have given it to another node since.
 */
final class FreezeWatch {
    /** A pause of the node's thread this long is a freeze, not a busy machine. */
    static final Duration FREEZE = Duration.ofSeconds(1);
    /** How long after a freeze is noticed the deliveries still ask: those that waited in the client's queue. */
    private static final Duration AFTER = Duration.ofSeconds(2);

    private volatile long lastTickNanos = System.nanoTime();
    private volatile long suspectUntilNanos = lastTickNanos;

    /** Called on every tick of the node's thread. */
    void ticked() {
        long now = System.nanoTime();
        if (now - lastTickNanos > FREEZE.toNanos()) {
            suspectUntilNanos = now + AFTER.toNanos();
        }
        lastTickNanos = now;
    }

    /** Whether the process stood still a moment ago, or seems to be waking now. */
    boolean justFrozen() {
        long now = System.nanoTime();
        return now - lastTickNanos > FREEZE.toNanos() || now - suspectUntilNanos < 0;
    }
}

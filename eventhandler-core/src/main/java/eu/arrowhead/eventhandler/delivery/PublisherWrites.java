package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.config.EventHandlerConfig.WriteMode;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A publish as the publishing thread runs it: through the event log (which hands the events to the hub), then
 * the writes it causes, done by the publishing thread itself once the hub's lock is released (the
 * {@link Publication} carries them from the subscribers' offers to here).
 *
 * <p>{@code queued} (the design): a subscriber whose queue was idle would otherwise have its drain handed
 * to a writer thread, one more wake-up between the publish and the socket. The publisher runs that drain
 * itself instead: the same non-blocking writes (never more than the socket takes; the rest is left to a
 * writer), after the hub's lock, so nobody waits for it but this publisher's own 200. Under load a
 * subscriber's drain is usually already scheduled and the event just joins its queue, as before.
 * Measured with {@code scripts/bench A} (kept-alive row) on the 2-core machine: publishes on a worker,
 * p50 0.36 -> 0.32 ms and p99 3.82 -> 0.66 ms; publishes on the selector after warm-up
 * ({@code --events=20000}), p50 0.123 -> 0.088 ms, p99 3.3 -> 1.9 ms, 7 469 -> 8 405 publishes/s.
 * A large fan-out stays whole on the publisher: sharing 1 000 drains with the two writer threads (a third
 * each, one task per writer) measured p50 54 ms, p99 236 ms in {@code scripts/bench F} (one run), against
 * 12-14 ms and 46-53 ms drained inline: the publisher then answers early and outruns the writers, whose
 * queues grow; draining inline paces it.
 *
 * <p>{@code publisher-thread} (an ablation, for benchmarks only): the publisher writes each matching
 * subscriber's queue in turn, waiting up to {@code subscriber.write-timeout-seconds} for a socket to take
 * each frame, as Jersey's {@code SseBroadcaster} did in the seeds, so a stalled subscriber holds up the
 * publisher, and through the subscriber's monitor every other publisher to it.
 */
public final class PublisherWrites {
    private final EventLog log;
    private final WriteMode mode;
    private final long writeTimeoutNanos;

    public PublisherWrites(EventLog log, WriteMode mode, long writeTimeoutNanos) {
        this.log = log;
        this.mode = mode;
        this.writeTimeoutNanos = writeTimeoutNanos;
    }

    /**
     * Appends the events to the log, then, on this thread and with the hub's lock released, does the work its
     * subscribers' offers left: the writes to their sockets, push deliveries to start.
     *
     * @return the events' ids, as {@link EventLog#append} gives them: at once in a single node, once the stream
     *         acknowledges them in a cluster (whose stream feed, not this thread, delivers them)
     * @throws UnavailableException as {@link EventLog#append} does; the work already left is done anyway
     */
    public CompletableFuture<long[]> publish(List<IncomingEvent> events, PublishKey key) {
        Publication publication = mode == WriteMode.PUBLISHER_THREAD
                ? Publication.blockingWrites(writeTimeoutNanos) : Publication.queued();
        try {
            return log.append(events, key, publication);
        } finally {
            publication.runDeferred();
        }
    }
}

package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The event log: where a publish goes and what gives every event its id, and where resumes older than the
 * replay windows are read. It is the seam between the broker and a backend, as the transport is in Mercure: a
 * single node's log ({@code store/LocalEventLog}: the node's own sequence, kept in its database or nowhere) and a
 * cluster's ({@code cluster/StreamEventLog}: the NATS stream every node shares) implement it whole, and nothing
 * above it asks which one it is.
 *
 * <p>Either way, every event reaches this node's subscribers the same way: the log hands it to the hub's
 * {@link Hub#deliver}, in id order, once it is in the log as far as the log promises. The local log does so on the
 * publishing thread (or, in {@code store.mode=sync}, on its writer once the events are committed); the cluster's
 * on the thread that reads the stream, for every node's publishes alike.
 */
public interface EventLog {

    /**
     * Appends one publish's events, all or none, with increasing ids. A single node's log has the ids when this
     * returns (a completed future); a cluster's once the stream acknowledges the events, on a thread of its own,
     * while the publishing thread goes on with other requests.
     *
     * @param key         the request's {@code Idempotency-Key}: a repeat of an earlier request with the same key
     *                    gets that request's ids and publishes nothing
     * @param publication collects the work the subscribers' offers leave when the events are delivered on this
     *                    thread; the caller runs it ({@link Publication#runDeferred}) once this returns or throws
     * @return the events' ids, in order (consecutive in a single node's log; another node's events may lie
     *         between them in a cluster's); it fails as this method throws. Its dependent actions run on the
     *         log's threads: they must not block
     * @throws UnavailableException if the log cannot take the events now (503): they then exist nowhere. A
     *                              cluster's future may also fail with it, at its deadline: events then may be
     *                              stored, and a repeat with the same key gets their ids
     * @throws eu.arrowhead.eventhandler.protocol.RequestException 422 if the key named another request
     */
    CompletableFuture<long[]> append(List<IncomingEvent> events, PublishKey key, Publication publication);

    /**
     * The ids an earlier request with the key was answered with, if this log keeps its keys where a lookup is
     * cheap; {@code null} when there is none (or the log answers repeats only in {@link #append}). Asked before a
     * request's body is parsed, so that a publisher's retry after a lost answer gets it even while the log refuses
     * new events.
     *
     * @throws UnavailableException while the first request with the key is still being handled
     * @throws eu.arrowhead.eventhandler.protocol.RequestException 422 if the key named another request
     */
    long[] answered(PublishKey key);

    /**
     * Fails at once if {@link #append} would refuse a publish of this size now (the log's writer is behind, or the
     * log cannot be reached), so that it is refused before its body is parsed. Does not block.
     *
     * @param bodyBytes the size of the publish's body
     * @throws UnavailableException if the log cannot take it now
     */
    void requireRoom(long bodyBytes);

    /**
     * Whether {@link #append} may wait (for a commit, or for room in the link to another server) or answer after
     * it returns. A publish then runs on a worker thread, never on a selector.
     */
    boolean appendWaits();

    /** The last id the log held when this node started: the hub delivers the events after it. */
    long lastId();

    /**
     * Whether the log may still hand the hub {@code id}, an id past every event the hub has delivered: a resume
     * from it then has to wait (an event being committed, or one another node appended that this node has not yet
     * read). {@code false} for an id the log never gave, which comes from before a restart that lost the sequence.
     * A local log says {@code true} for every id it gave, so after a failed commit in {@code store.mode=sync} such a
     * resume waits until the next commit. Called under the hub's lock: it must not block or take a lock.
     */
    boolean mayStillDeliver(long id);

    /** Whether {@link #read} can serve events older than the replay windows hold. */
    boolean replays();

    /**
     * Fails at once if a {@link #read} of ids in ({@code afterId}, {@code upToId}] is known to fail now (the
     * database is down), so that a resume is refused without waiting for the database. Does not block.
     *
     * @throws UnavailableException if the log cannot be read now
     */
    void requireReadable(long afterId, long upToId);

    /**
     * Reads logged events of the topics with ids in ({@code afterId}, {@code upToId}], oldest first, at most
     * {@code maxEvents} of them before the filter. Blocks on the database or the stream: never call it on a
     * selector thread.
     *
     * @throws UnavailableException if the log cannot be read now
     */
    LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents);

    /**
     * A slice of the log.
     *
     * @param events     the events that passed the filter, oldest first
     * @param gaps       each range of ids in the slice that the log does not hold (deleted by retention,
     *                   dropped while the database was down, lost in a crash), oldest first; a subscriber is
     *                   told of each where it lies among the events
     * @param complete   whether the page reaches {@code upToId}; if not, it ends at {@code lastReadId}
     * @param lastReadId the id of the last event read, filtered out or not
     */
    record LogPage(List<PublishedEvent> events, List<ReplayGap> gaps, boolean complete, long lastReadId) {
    }
}

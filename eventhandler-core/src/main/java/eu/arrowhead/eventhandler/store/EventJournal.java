package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishKey;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Where a single node's event log ({@link LocalEventLog}) keeps every event once it has its id: the event store,
 * or nowhere ({@link #NONE}). The log calls {@link #append} under its lock, so the journal receives events in id
 * order.
 */
public interface EventJournal {

    /** The journal of {@code store.mode=off}: keeps nothing, so resuming ends at the replay windows. */
    EventJournal NONE = new EventJournal() {
        @Override
        public long lastId() {
            return 0;
        }

        @Override
        public boolean durable() {
            return false;
        }

        @Override
        public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, PublishKey key,
                                              Runnable afterCommit) {
            return COMMITTED;
        }

        @Override
        public boolean replays() {
            return false;
        }

        @Override
        public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter,
                            int maxEvents) {
            throw new UnavailableException("the event store is off (store.mode=off)");
        }
    };

    /** A future that is already complete: what a journal that does not wait for commits returns. */
    CompletableFuture<Void> COMMITTED = CompletableFuture.completedFuture(null);

    /** The last id given out before this start: the sequence goes on after it. */
    long lastId();

    /**
     * Whether events reach subscribers only once committed ({@code store.mode=sync}). Then the log passes
     * the delivery as {@code afterCommit} to {@link #append}; otherwise it delivers at once.
     */
    boolean durable();

    /**
     * Takes events that have just been given consecutive ids. Called under the log's lock, in id order:
     * it must not block.
     *
     * @param key         the publish's {@code Idempotency-Key} ({@link PublishKey#NONE} for none): a journal that keeps
     *                    events keeps it with them, in the same commit, for {@link #recentKeys} after a restart
     * @param afterCommit for a durable journal, run once the events are committed, before the returned
     *                    future completes, in id order with every other append; {@code null} otherwise
     * @return completes when the events are committed (a durable journal) or at once; fails with
     *         {@link UnavailableException} when they cannot be
     * @throws UnavailableException if the journal cannot take the events now (its writer is behind, or a
     *                                 durable journal's database is down): they then get no ids and reach nobody
     */
    CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, PublishKey key, Runnable afterCommit);

    /**
     * The keyed publishes of the last {@code window} the journal kept from earlier runs, the newest
     * {@code maxKeys} of them, oldest first; read once, at start. None unless overridden.
     */
    default List<StoredKey> recentKeys(Duration window, int maxKeys) {
        return List.of();
    }

    /**
     * Fails at once if {@link #append} would refuse a publish of this size now (its writer is behind), so that it
     * is refused before its body is parsed. Does not block; {@link #append} still decides.
     *
     * @param bodyBytes the size of the publish's body
     * @throws UnavailableException if the journal cannot take it now
     */
    default void requireRoom(long bodyBytes) {
    }

    /** As {@link eu.arrowhead.eventhandler.topic.EventLog#replays}. */
    boolean replays();

    /** As {@link eu.arrowhead.eventhandler.topic.EventLog#requireReadable}; does nothing unless overridden. */
    default void requireReadable(long afterId, long upToId) {
    }

    /** As {@link eu.arrowhead.eventhandler.topic.EventLog#read}. */
    LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents);
}

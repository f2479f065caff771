package eu.arrowhead.eventhandler.store;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a node keeps besides the events' path through its {@link eu.arrowhead.eventhandler.topic.EventLog}: a page
 * of the log for {@code mgmt/events}, its state (health, metrics), the push subscriptions and the Authorization
 * system's answers, the periodic tasks it needs run, and a drain and close at shutdown. A single node's database
 * ({@link DatabaseEventStore}) and a cluster's stream implement it.
 */
public interface EventStore extends SubscriptionStore {

    /**
     * A page of the log for {@code GET /eventhandler/mgmt/events}, oldest first.
     *
     * @param topicKeys  the topics, empty for every topic
     * @param fromMillis the earliest timeStamp, inclusive; {@code null} for no bound
     * @param toMillis   the latest timeStamp, inclusive; {@code null} for no bound
     * @param afterId    only events after this id
     * @param limit      at most this many events
     * @throws eu.arrowhead.eventhandler.protocol.UnavailableException if the log cannot be read now
     */
    QueryPage query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit);

    /** Where the Authorization system's last answers are kept ({@link AuthorizationStore#NONE} for nowhere). */
    AuthorizationStore authorizationAnswers();

    /** The store's state, for the health endpoint and the metrics. */
    Status status();

    /** Work the store needs done now and then, off the request path; the server runs it on one thread. */
    List<PeriodicTask> periodicTasks();

    /**
     * Waits until everything appended is written, or the deadline passes; no more appends may come (the
     * log is closed). The writer then stops.
     *
     * @return whether everything was written
     */
    boolean drain(Duration timeout) throws InterruptedException;

    /**
     * Stops writing and lets the log go. If everything was written, the log records a clean stop, so that the
     * next start continues the sequence exactly.
     */
    void close();

    /**
     * One event as the log holds it.
     *
     * @param id   its id
     * @param json its JSON exactly as delivered ({@link eu.arrowhead.eventhandler.protocol.EventEncoding#withId})
     */
    record LoggedEvent(long id, String json) {
    }

    /**
     * A page of {@code mgmt/events}.
     *
     * @param events      the events, oldest first
     * @param nextAfterId where the next page starts, if there may be one: a page can end before its limit (its
     *                    bytes, or the events a time range let it examine) and still have more after it
     */
    record QueryPage(List<LoggedEvent> events, OptionalLong nextAfterId) {

        /** A page that has more after it exactly when it is full. */
        public static QueryPage ofLimit(List<LoggedEvent> events, int limit) {
            return new QueryPage(events, events.size() == limit ? OptionalLong.of(events.get(limit - 1).id())
                    : OptionalLong.empty());
        }
    }

    /**
     * A step the server runs on the store's own thread, first after {@code firstAfter}, then {@code every}
     * after each run ends.
     */
    record PeriodicTask(Runnable step, Duration firstAfter, Duration every) {
    }

    /**
     * The event store's state.
     *
     * @param mode               async or sync
     * @param status             UP, or DOWN while the database cannot be written
     * @param bufferedEvents     events accepted but not yet written
     * @param bufferedBytes      the heap they hold, estimated as for {@code store.buffer-bytes}
     * @param lastLoggedId       the id of the last event written
     * @param deletedUpTo        retention deleted every event up to this id
     * @param missingRanges      ranges of ids above that the log does not hold (dropped during an outage, or
     *                           lost in a crash), each reported to the resumes that cross it
     * @param writtenEvents      events written since the start
     * @param droppedEvents      events dropped from the log because the buffer was full while the database was down
     * @param refusedPublishes   publishes refused with 503 because the writer was behind (backpressure)
     * @param failedTransactions write transactions that failed (and were retried)
     * @param lastError          why the database cannot be written, while DOWN
     * @param downSince          since when the store is DOWN
     * @param damagedRanges      ranges of ids ({@code first-last}) that H2 cannot read because its file is damaged:
     *                           skipped, told to resumes as missing, and the server DEGRADED until the file is
     *                           repaired
     */
    record Status(String mode, String status, long bufferedEvents, long bufferedBytes, long lastLoggedId,
                  long deletedUpTo, int missingRanges, long writtenEvents, long droppedEvents,
                  long refusedPublishes, long failedTransactions, String lastError, String downSince,
                  List<String> damagedRanges) {

        /** This state with the damaged ranges known. */
        Status withDamagedRanges(List<String> ranges) {
            return new Status(mode, status, bufferedEvents, bufferedBytes, lastLoggedId, deletedUpTo, missingRanges,
                    writtenEvents, droppedEvents, refusedPublishes, failedTransactions, lastError, downSince,
                    List.copyOf(ranges));
        }

        /** Whether every event the log holds can be read. */
        @JsonIgnore
        public boolean isReadable() {
            return damagedRanges.isEmpty();
        }

        /** Whether the store writes. */
        @JsonIgnore
        public boolean isUp() {
            return "UP".equals(status);
        }
    }
}

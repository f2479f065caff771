package eu.arrowhead.eventhandler.store;

import com.fasterxml.jackson.annotation.JsonIgnore;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.topic.HubUnavailableException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event store: the log of every accepted event. Its {@link JournalWriter} buffers what the hub appends
 * and commits it off the request path; this class opens the log, serves replays from the writer's buffer
 * and the database, answers {@code mgmt/events}, enforces retention and keeps push subscriptions.
 */
public final class EventStore implements EventJournal, SubscriptionStore {
    private static final Logger LOG = LoggerFactory.getLogger(EventStore.class);
    /** How often {@link #compactStorage} runs: at 1 000 commits a second, some 2.5 MB of chunk objects. */
    public static final Duration COMPACT_EVERY = Duration.ofSeconds(10);

    private final EventDatabase database;
    private final JournalWriter writer;
    private final boolean durable;
    private final long lastIdAtStart;
    private final Duration retentionAge;
    private final long retentionEvents;
    private final MissingRanges missing;

    private EventStore(EventDatabase database, EventHandlerConfig config, long lastIdAtStart, MissingRanges missing) {
        this.database = database;
        this.durable = config.storeMode() == EventHandlerConfig.StoreMode.SYNC;
        this.lastIdAtStart = lastIdAtStart;
        this.missing = missing;
        this.retentionAge = config.storeRetentionAge();
        this.retentionEvents = config.storeRetentionEvents();
        this.writer = new JournalWriter(database, config.storeMode(), config.storeBatchEvents(),
                new WriteBuffer(config.storeBufferEvents(), config.storeBufferBytes()), lastIdAtStart, missing);
    }

    /**
     * Opens the store: connects, migrates the schema, and finds where the sequence goes on.
     *
     * <p>After a crash the sequence goes on as many ids after the last commit as the crashed run could have
     * given out unwritten (its lag bound: {@code store.buffer-events} in async mode, 0 in sync mode, where
     * events are delivered only once committed), so that no id is given to two events; those ids are recorded
     * as a missing range, so that every resume across them gets a replay-gap notice.
     *
     * @throws SQLException if the database cannot be reached or migrated: the server does not start
     *                      without its log, since it could not continue the sequence
     */
    public static EventStore open(EventHandlerConfig config) throws SQLException {
        EventDatabase database = EventDatabase.open(config);
        try {
            EventDatabase.State state = database.state();
            MissingRanges missing = new MissingRanges(state.deletedUpTo(), state.missing());
            long start = state.lastId();
            if (state.cleanStop() != state.lastId() && state.lagBound() > 0) {
                missing.add(start + 1, start + state.lagBound());
                LOG.warn("the previous run did not stop cleanly: events it accepted after id {} are not in the"
                        + " log; ids continue after {} so that none is given twice, and resumes across {}-{}"
                        + " are told", start, start + state.lagBound(), start + 1, start + state.lagBound());
                start += state.lagBound();
            }
            long lagBound = config.storeMode() == EventHandlerConfig.StoreMode.SYNC ? 0 : config.storeBufferEvents();
            List<MissingRanges.Range> hole = missing.unsaved();
            database.setState(Map.of(StateRecord.LAST_ID, start, StateRecord.CLEAN_STOP, -1L,
                    StateRecord.LAG_BOUND, lagBound), hole);
            missing.saved(hole);
            EventStore store = new EventStore(database, config, start, missing);
            store.writer.start();
            LOG.info("event store open ({} mode, {}): the sequence continues after {}",
                    config.storeMode().name().toLowerCase(), config.storeUrl(), start);
            return store;
        } catch (RuntimeException e) {
            database.close();
            throw new SQLException("the event store cannot be read: " + e.getMessage(), e);
        }
    }

    @Override
    public long lastId() {
        return lastIdAtStart;
    }

    @Override
    public boolean durable() {
        return durable;
    }

    @Override
    public boolean replays() {
        return true;
    }

    @Override
    public CompletableFuture<Void> append(long firstId, List<IncomingEvent> events, Runnable afterCommit) {
        return writer.append(firstId, events, afterCommit);
    }

    @Override
    public void requireRoom() {
        writer.requireRoom();
    }

    /** While the writer finds the database down, a read that needs the database is refused at once. */
    @Override
    public void requireReadable(long afterId, long upToId) {
        writer.requireReadable(afterId, upToId);
    }

    @Override
    public LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        JournalWriter.Unwritten unwritten = writer.unwritten(afterId, upToId, topicKeys);
        List<ReplayGap> gaps = unwritten.gaps();
        long committed = unwritten.committedUpTo();
        List<EventRecord> rows = List.of();
        if (afterId < Math.min(upToId, committed)) {
            try {
                rows = database.read(afterId, Math.min(upToId, committed), topicKeys, maxEvents);
            } catch (RuntimeException e) {
                throw new HubUnavailableException("the event store cannot be read now ("
                        + EventDatabase.describe(e) + "); resume again later");
            }
        }
        boolean metaFilter = !filter.metaData().isEmpty();
        List<PublishedEvent> events = new ArrayList<>();
        long lastRead = afterId;
        for (EventRecord row : rows) {
            PublishedEvent event = PublishedEvent.logged(row.id(), incoming(row, metaFilter));
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = row.id();
        }
        int room = maxEvents - rows.size();
        for (PublishedEvent event : unwritten.buffered()) {
            if (event.id() <= lastRead) {
                continue;
            }
            if (room-- == 0) {
                return partPage(events, gaps, lastRead);
            }
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = event.id();
        }
        // A full page that reached upToId left nothing behind: the stream goes on live rather than making the
        // client reconnect for nothing. (Whether it did used to depend on how much of the page the writer had
        // committed, which made one resume end and the same resume a moment later go on.)
        return rows.size() == maxEvents && lastRead < upToId ? partPage(events, gaps, lastRead)
                : new LogPage(events, gaps, true, upToId);
    }

    /** A page that ends at {@code lastRead}: the holes after it belong to the next page. */
    private static LogPage partPage(List<PublishedEvent> events, List<ReplayGap> gaps, long lastRead) {
        return new LogPage(events, gaps.stream().filter(gap -> gap.requestedAfterId() < lastRead).toList(), false,
                lastRead);
    }

    /** Turns a row back into the event the hub encoded; metadata are parsed only when a filter needs them. */
    private static IncomingEvent incoming(EventRecord row, boolean withMetaData) {
        String json = row.json();
        byte[] fields = json.substring(json.indexOf(',') + 1).getBytes(StandardCharsets.UTF_8);
        byte[] prefix = IncomingEvent.ID_ZERO;
        byte[] bytes = new byte[prefix.length + fields.length];
        System.arraycopy(prefix, 0, bytes, 0, prefix.length);
        System.arraycopy(fields, 0, bytes, prefix.length, fields.length);
        Map<String, String> metaData = Map.of();
        if (withMetaData) {
            try {
                Map<String, String> parsed = JsonMapper.get().readValue(json, Event.class).metaData();
                metaData = parsed == null ? Map.of() : parsed;
            } catch (IOException e) {
                throw new IllegalStateException("event " + row.id() + " in the log is not valid JSON", e);
            }
        }
        return new IncomingEvent(row.eventType(), row.topicKey(), row.sourceKey(), metaData,
                row.timeStampMillis(), bytes);
    }

    /**
     * A page of the log for {@code GET /eventhandler/mgmt/events}, as the JSON the endpoint answers.
     *
     * @param topicKeys empty for every topic
     */
    public byte[] query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit) {
        List<EventRecord> rows;
        try {
            rows = database.query(topicKeys, fromMillis, toMillis, afterId, limit);
        } catch (RuntimeException e) {
            throw new HubUnavailableException("the event store cannot be read now (" + EventDatabase.describe(e)
                    + ")");
        }
        StringBuilder out = new StringBuilder(64 + rows.size() * 128).append("{\"data\":[");
        for (int i = 0; i < rows.size(); i++) {
            out.append(i == 0 ? "" : ",").append(rows.get(i).json());
        }
        out.append("],\"count\":").append(rows.size());
        if (rows.size() == limit) {
            out.append(",\"nextAfterId\":").append(rows.get(rows.size() - 1).id());
        }
        return out.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Deletes what the retention settings no longer keep; run periodically. */
    /**
     * Keeps H2's store file in few chunks ({@link EventDatabase#compactEmbeddedStore}); run every
     * {@link #COMPACT_EVERY} on the retention thread. A database that cannot be reached now is compacted
     * next time.
     */
    public void compactStorage() {
        try {
            database.compactEmbeddedStore();
        } catch (RuntimeException e) {
            LOG.debug("the event store's file was not compacted: {}", e.toString());
        }
    }

    public void enforceRetention() {
        long upTo = 0;
        try {
            if (!retentionAge.isZero()) {
                upTo = database.lastIdBefore(System.currentTimeMillis() - retentionAge.toMillis());
            }
            if (retentionEvents > 0) {
                upTo = Math.max(upTo, database.idBeforeNewest(retentionEvents));
            }
            if (upTo == 0) {
                return;
            }
            long deleted = database.deleteUpTo(upTo);
            missing.deletedUpTo(upTo);
            if (deleted > 0) {
                LOG.info("retention deleted {} events up to id {}", deleted, upTo);
            }
        } catch (RuntimeException e) {
            LOG.warn("retention could not run: {}; it will run again", EventDatabase.describe(e));
        }
    }

    @Override
    public List<StoredSubscription> loadSubscriptions() {
        return database.subscriptions();
    }

    @Override
    public void saveSubscription(StoredSubscription subscription) {
        database.saveSubscription(subscription);
    }

    @Override
    public void deleteSubscription(long id) {
        database.deleteSubscription(id);
    }

    /** The store's state for the health endpoint and the metrics. */
    public Status status() {
        return writer.status();
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
     */
    public record Status(String mode, String status, long bufferedEvents, long bufferedBytes, long lastLoggedId,
                         long deletedUpTo, int missingRanges, long writtenEvents, long droppedEvents,
                         long refusedPublishes, long failedTransactions, String lastError, String downSince) {

        /** Whether the store writes. */
        @JsonIgnore
        public boolean isUp() {
            return "UP".equals(status);
        }
    }

    /**
     * Waits until everything appended is written, or the deadline passes; no more appends may come (the
     * hub is closed). The writer then stops.
     *
     * @return whether everything was written
     */
    public boolean drain(Duration timeout) throws InterruptedException {
        return writer.drain(timeout);
    }

    /**
     * Stops the writer and closes the database. If everything was written, the log records a clean stop,
     * so that the next start continues the sequence exactly.
     */
    public void close() {
        try {
            OptionalLong written = writer.stop();
            if (written.isPresent()) {
                long lastId = written.getAsLong();
                // With the ranges dropped since the last commit (the last publish of an outage may have been).
                database.setState(Map.of(StateRecord.LAST_ID, lastId, StateRecord.CLEAN_STOP, lastId),
                        missing.unsaved());
                LOG.info("event store closed cleanly after id {}", lastId);
            } else {
                LOG.warn("event store closed with events unwritten; the next start skips ids to stay unique and"
                        + " records them as missing");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("could not record the clean stop in the event store: {}", EventDatabase.describe(e));
        } finally {
            database.close();
        }
    }
}

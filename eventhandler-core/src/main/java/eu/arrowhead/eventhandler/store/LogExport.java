package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * A single node's log read out for its move into a cluster's stream ({@code MigrateToCluster}): its events in
 * pages, oldest first, each with its id and as the hub encoded it, and the last id the node gave out. Opened on a
 * stopped node's database only: a log whose last run did not stop cleanly (it runs now, or it crashed) is refused,
 * so that no event is appended while it is read and the last id given out is known exactly.
 */
public final class LogExport implements AutoCloseable {
    /** What one page holds at most of event JSON: a page's acknowledgements are awaited before the next is read. */
    private static final long MAX_PAGE_BYTES = 8L << 20;
    /** Damaged ranges of H2's file one page may step around before giving up. */
    private static final int MAX_DAMAGE_PER_PAGE = 16;

    private final EventDatabase database;
    private final DamagedRanges damaged;
    private final long lastGivenId;

    private LogExport(EventDatabase database, DamagedRanges damaged, long lastGivenId) {
        this.database = database;
        this.damaged = damaged;
        this.lastGivenId = lastGivenId;
    }

    /**
     * One event of the log.
     *
     * @param id    its id
     * @param event the event as the hub encoded it (id 0 in its JSON), metadata parsed
     */
    public record Exported(long id, IncomingEvent event) {
    }

    /**
     * Opens the log named by the {@code store.*} keys.
     *
     * @throws SQLException if it cannot be reached or read
     * @throws IllegalStateException if its last run did not stop cleanly
     */
    public static LogExport open(EventHandlerConfig config) throws SQLException {
        OptionalLong mark;
        try {
            mark = IdMark.read(IdMark.fileOf(config));
        } catch (IOException e) {
            throw new SQLException("the id mark " + IdMark.fileOf(config) + " cannot be read: " + e.getMessage(), e);
        }
        EventDatabase database = EventDatabase.open(config);
        try {
            EventDatabase.State state = database.state();
            if (state.cleanStop() != state.lastId()) {
                throw new IllegalStateException("the log at " + config.storeUrl() + " did not record a clean stop:"
                        + " its node runs now, or it crashed. Start the single node once more if it crashed, stop it"
                        + " with SIGTERM, then migrate");
            }
            MissingRanges missing = new MissingRanges(state.deletedUpTo(), state.missing());
            return new LogExport(database, new DamagedRanges(missing),
                    Math.max(state.lastId(), mark.orElse(0)));
        } catch (RuntimeException e) {
            database.close();
            throw e;
        }
    }

    /** The last id the single node gave out: the cluster's ids go on after it, so that none is given twice. */
    public long lastGivenId() {
        return lastGivenId;
    }

    /**
     * The events after {@code afterId}, oldest first: at most {@code maxEvents}, and fewer when they are large.
     * Ids H2 cannot read (a damaged file) are stepped around, as a replay does: they are not in the page.
     *
     * @return empty once the log has no event after {@code afterId}
     */
    public List<Exported> page(long afterId, int maxEvents) {
        for (int found = 0; found < MAX_DAMAGE_PER_PAGE; found++) {
            try {
                EventPages.Page page = database.query(List.of(), null, null, afterId, maxEvents, MAX_PAGE_BYTES,
                        damaged);
                List<Exported> events = new ArrayList<>(page.rows().size());
                for (EventRecord row : page.rows()) {
                    events.add(new Exported(row.id(), JournalReader.incoming(row, true)));
                }
                return events;
            } catch (DamagedRangeException e) {
                damaged.found(e.range(), "the migration");
            }
        }
        throw new IllegalStateException("the log's file is damaged in more than " + MAX_DAMAGE_PER_PAGE
                + " places after id " + afterId + "; repair it first (docs/reliability.md)");
    }

    /** The event of {@code id}, or {@code null} if the log does not hold it. */
    public Exported event(long id) {
        List<Exported> page = page(id - 1, 1);
        return page.isEmpty() || page.get(0).id() != id ? null : page.get(0);
    }

    /** The id of the last event the log holds at or before {@code id}; 0 if there is none. */
    public long lastIdAtOrBefore(long id) {
        Long found = database.upkeepStateless(session -> session.createSelectionQuery(
                "select max(e.id) from EventRecord e where e.id <= :id", Long.class).setParameter("id", id)
                .getSingleResult());
        return found == null ? 0 : found;
    }

    @Override
    public void close() {
        database.close();
    }
}

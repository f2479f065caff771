package eu.arrowhead.eventhandler.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Finds exactly which ids of the log H2 cannot read. Damage in H2's file makes whole B-tree pages unreadable:
 * every id whose place is in such a page fails, whether or not it holds an event, and a range scan fails as soon
 * as it reaches the page, even one that ends before it. So each id is tried alone, by primary key, with its JSON
 * read: exact, never taking a readable event for a damaged one. A failed try costs about 0.35 ms (a whole page is
 * read and checked), a good one 15 us; a damaged leaf holds some 300-500 ids.
 */
final class DamageProbe {
    /** Ids tried in one direction per probe: a range longer than this is found a part at a time, read by read. */
    static final int MAX_TRIES = 4_096;
    private static final String READ_ONE = "SELECT event_json FROM eh_event WHERE id = ?";

    private final PreparedStatement readOne;

    private DamageProbe(PreparedStatement readOne) {
        this.readOne = readOne;
    }

    /** Runs {@code work} with a probe on this connection (a reader's, inside its transaction). */
    static <T> T on(Connection connection, ProbeWork<T> work) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(READ_ONE)) {
            return work.run(new DamageProbe(statement));
        }
    }

    interface ProbeWork<T> {
        T run(DamageProbe probe) throws SQLException;
    }

    /** Whether H2 fails to read id's place in the log (with or without an event there) because its file is damaged. */
    boolean unreadable(long id) throws SQLException {
        readOne.setLong(1, id);
        try (ResultSet row = readOne.executeQuery()) {
            if (row.next()) {
                row.getString(1);
            }
            return false;
        } catch (SQLException e) {
            if (EmbeddedH2.isCorruption(e)) {
                return true;
            }
            throw e;
        }
    }

    /**
     * The run of unreadable ids around {@code unreadableId}: down to just above {@code readableBelow} at most,
     * and up to the first readable id (at most {@link #MAX_TRIES} each way).
     */
    MissingRanges.Range runAround(long unreadableId, long readableBelow) throws SQLException {
        long first = unreadableId;
        for (int tries = 0; tries < MAX_TRIES && first - 1 > readableBelow && unreadable(first - 1); tries++) {
            first--;
        }
        long last = unreadableId;
        for (int tries = 0; tries < MAX_TRIES && last < Long.MAX_VALUE && unreadable(last + 1); tries++) {
            last++;
        }
        return new MissingRanges.Range(first, last);
    }

    /** The first unreadable id from {@code fromId} on, within {@link #MAX_TRIES} ids, or -1. */
    long firstUnreadableFrom(long fromId) throws SQLException {
        for (long id = fromId; id < fromId + MAX_TRIES; id++) {
            if (unreadable(id)) {
                return id;
            }
        }
        return -1;
    }
}

package eu.arrowhead.eventhandler.store;

import java.util.List;

/**
 * The statements on the kept answers of the authorization system ({@link AnswerRecord}), each run as the database's
 * upkeep, on a reader connection, in a transaction of its own.
 */
final class AnswerTable {
    private final EventDatabase database;

    AnswerTable(EventDatabase database) {
        this.database = database;
    }

    List<AuthorizationStore.StoredAnswer> answers() {
        return database.upkeepStateless(session -> session.createSelectionQuery(
                "from AnswerRecord a", AnswerRecord.class).getResultList())
                .stream().map(AnswerRecord::stored).toList();
    }

    /** Inserts or replaces the answer for its subscriber. */
    void save(AuthorizationStore.StoredAnswer answer) {
        database.upkeepTransaction(session -> session.merge(new AnswerRecord(answer)));
    }

    void deleteAll() {
        database.upkeepTransaction(session -> session.createMutationQuery("delete from AnswerRecord a").executeUpdate());
    }
}

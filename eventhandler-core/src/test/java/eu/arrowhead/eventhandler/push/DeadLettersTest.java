package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A dead letter taken by a save is in neither the pending list nor the database until the save commits: a sysop
 * who lists or drops it meanwhile finds it, and a letter dropped meanwhile stays dropped, whether the save commits
 * or fails. The save's steps are taken here one by one, as {@link LogCursors}' thread takes them, with a dropped
 * letter's management request between them.
 */
class DeadLettersTest {
    private final LetterTable table = new LetterTable();
    private final DeadLetters letters = new DeadLetters(table, 100);
    /** The letters of events 7 and 8, taken by a save that has not committed yet. */
    private List<DeadLetter> saving;

    @BeforeEach
    void takeTwoLettersToSave() {
        letters.add(letter(7));
        letters.add(letter(8));
        saving = letters.takePending();
    }

    @Test
    void aLetterDroppedWhileItsSaveIsUnderWayIsListedFoundAndStaysDropped() {
        assertEquals(List.of(7L, 8L), ids(letters.list(1, 0, 100)), "listed while their save is under way");
        assertEquals(1, letters.drop(1, OptionalLong.of(7)), "found, not a 404");
        assertEquals(List.of(8L), ids(letters.list(1, 0, 100)));
        table.saveCursors(Map.of(), saving, 100);
        letters.saved();
        assertEquals(List.of(8L), ids(letters.list(1, 0, 100)), "the commit did not bring it back");
        assertEquals(List.of(8L), table.eventIds());
    }

    /** CI once counted 5 of 3 letters: the save had committed, and its letters were still held as being saved. */
    @Test
    void aLetterWhoseSaveCommittedButIsNotYetNotedIsCountedAndListedOnce() {
        letters.add(letter(9));
        assertEquals(3, letters.count(1));
        table.saveCursors(Map.of(), saving, 100);
        assertEquals(3, letters.count(1), "committed, not yet noted as saved");
        assertEquals(List.of(7L, 8L, 9L), ids(letters.list(1, 0, 100)));
        letters.saved();
        assertEquals(3, letters.count(1));
    }

    @Test
    void aSaveThatFailsPutsBackOnlyTheLettersNotDroppedMeanwhile() {
        assertEquals(2, letters.drop(1, OptionalLong.empty()), "all of them, those being saved too");
        letters.putBack(saving);
        assertEquals(List.of(), ids(letters.list(1, 0, 100)));
        table.saveCursors(Map.of(), letters.takePending(), 100);
        letters.saved();
        assertEquals(List.of(), table.eventIds());
    }

    private static DeadLetter letter(long eventId) {
        return new DeadLetter(1, eventId, "reading", 400, "refused with 400", eventId);
    }

    private static List<Long> ids(List<DeadLetter> letters) {
        return letters.stream().map(DeadLetter::eventId).toList();
    }

    /** The database's dead-letter table of subscription 1, in memory: a save commits at once. */
    private static final class LetterTable implements SubscriptionStore {
        private final Map<Long, DeadLetter> rows = new TreeMap<>();

        // DeadLetters reads and writes letters only.
        @Override
        public List<StoredSubscription> loadSubscriptions() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void saveSubscription(StoredSubscription subscription) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void deleteSubscription(long id) {
            throw new UnsupportedOperationException();
        }

        @Override
        public synchronized Map<Long, Integer> saveCursors(Map<Long, Long> acknowledged, List<DeadLetter> deadLetters,
                                                           int keepPerSubscription) {
            deadLetters.forEach(letter -> rows.put(letter.eventId(), letter));
            return Map.of();
        }

        @Override
        public synchronized List<DeadLetter> loadDeadLetters(long subscriptionId, long afterEventId, int limit) {
            return rows.values().stream().filter(letter -> letter.eventId() > afterEventId).limit(limit).toList();
        }

        @Override
        public synchronized long countDeadLetters(long subscriptionId, Set<Long> alsoListed) {
            return rows.size() + alsoListed.stream().filter(id -> !rows.containsKey(id)).count();
        }

        @Override
        public synchronized int deleteDeadLetters(long subscriptionId, OptionalLong eventId) {
            if (eventId.isEmpty()) {
                int all = rows.size();
                rows.clear();
                return all;
            }
            return rows.remove(eventId.getAsLong()) == null ? 0 : 1;
        }

        synchronized List<Long> eventIds() {
            return List.copyOf(rows.keySet());
        }
    }
}

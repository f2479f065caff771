package eu.arrowhead.eventhandler.store;

import java.util.List;

/**
 * Where the Arrowhead Authorization system's last answer per subscriber is kept across restarts: the event
 * store's database, or nowhere ({@link #NONE}: with {@code store.mode=off}, and in cluster mode). Kept so that
 * an Authorization system down at a start leaves the existing subscribers served, as the 4.x Event Handler
 * does with the publishers it stores per subscription. Blocking; called off the request path, never per event.
 */
public interface AuthorizationStore {

    /** Keeps nothing: the answers live in memory only. */
    AuthorizationStore NONE = new AuthorizationStore() {
        @Override
        public List<StoredAnswer> loadAnswers() {
            return List.of();
        }

        @Override
        public void saveAnswer(StoredAnswer answer) {
        }

        @Override
        public void deleteAnswers() {
        }
    };

    /** Every answer kept. */
    List<StoredAnswer> loadAnswers();

    /** Inserts the answer, or replaces the one for its subscriber. */
    void saveAnswer(StoredAnswer answer);

    /** Deletes every answer: the Authorization system announced that its rules changed. */
    void deleteAnswers();

    /**
     * An answer as kept.
     *
     * @param subscriberKey the subscriber's system name in lower case
     * @param checkedMillis when the Authorization system gave it
     * @param json          the subscriber as asked about and the publishers named, as the security package writes them
     */
    record StoredAnswer(String subscriberKey, long checkedMillis, String json) {
    }
}

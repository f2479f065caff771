package eu.arrowhead.eventhandler.push;

import java.net.URI;

/**
 * What the {@link PushSender} sends from: one subscription's events, one POST at a time. A bounded queue in
 * memory ({@link PushSubscriber}, {@code store.mode=off}) or a cursor in the event log ({@link LogCursor}).
 */
interface PushQueue {

    /**
     * The next body to send, or {@code null}: sending then stops until the queue starts it again
     * ({@link PushSender#start}). The sender calls it once the previous body is delivered, needs no POST, or is
     * given up, which gives that body's charge back.
     */
    PushBody next();

    /** What the subscriber receives and where, now; its publishers are checked again as each event is sent. */
    PushRules rules();

    /** Where the events go. */
    default URI target() {
        return rules().target();
    }

    /** Whether nothing more is sent: the subscription is gone, or (for a {@link #durable} queue) the server stops. */
    boolean closed();

    /**
     * Whether a failed POST is tried again until it succeeds or the queue closes, since the event log still holds
     * it; otherwise up to {@code push.max-retries} times, then the event is dropped (counted).
     */
    boolean durable();

    /** @return whether this failure starts a run of them: the first since a POST succeeded */
    boolean failedOnce();

    /** The body in flight was answered with 2xx. @return how many POSTs had failed in a row before this one */
    int succeeded();

    /**
     * A {@link #durable} queue's body in flight was refused for good too often: it is set aside (and no longer
     * counts as failing), and the sender goes on with {@link #next}. A queue in memory is never asked: it drops an
     * event after {@code push.max-retries} whatever the answer.
     */
    default void setAside(PushBody body, FailedPost why) {
    }

    /** The sender is closing: nothing more is sent. */
    void stop();
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.push.FailedPost;
import eu.arrowhead.eventhandler.push.PushRules;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead letters of one subscription that a sysop asked this node to send again: POSTed one at a time, in the
 * order asked, each event read from the stream just before its POST (so that only the ids wait here). A letter its
 * subscriber takes (2xx) leaves the list; one it does not take stays, with the new answer. A letter dropped
 * meanwhile is still sent, but not listed again. All steps but the POST run on the letters' thread.
 */
final class LetterRedelivery {
    private static final Logger LOG = LoggerFactory.getLogger(LetterRedelivery.class);

    private final long subscriptionId;
    private final PushCursor cursor;
    private final DeadLetterBucket bucket;
    private final StreamReader reader;
    private final PushSender sender;
    private final Executor thread;
    /** Guarded by this. */
    private final Set<Long> waiting = new LinkedHashSet<>();
    /** The event being sent, or 0; guarded by this. */
    private long sending;
    /** Guarded by this. */
    private boolean closed;

    LetterRedelivery(long subscriptionId, PushCursor cursor, DeadLetterBucket bucket, StreamReader reader,
                     PushSender sender, Executor thread) {
        this.subscriptionId = subscriptionId;
        this.cursor = cursor;
        this.bucket = bucket;
        this.reader = reader;
        this.sender = sender;
        this.thread = thread;
    }

    /**
     * Queues an event to be sent again.
     *
     * @return false if it is queued or being sent already: it is sent once
     */
    boolean add(long eventId) {
        synchronized (this) {
            if (closed || eventId == sending || !waiting.add(eventId)) {
                return false;
            }
            if (sending != 0) {
                return true; // the sending goes on to it
            }
            sending = -1; // starting
        }
        sendNext();
        return true;
    }

    /** The subscription is gone: nothing more is sent. */
    synchronized void close() {
        closed = true;
        waiting.clear();
    }

    /** Takes the next letter, on the letters' thread; with none left, stops until {@link #add}. */
    private void sendNext() {
        try {
            thread.execute(this::send);
        } catch (RejectedExecutionException e) {
            close(); // the node stops: the letters stay listed
        }
    }

    private void send() {
        long eventId;
        synchronized (this) {
            Iterator<Long> next = waiting.iterator();
            if (closed || !next.hasNext()) {
                sending = 0;
                return;
            }
            eventId = next.next();
            next.remove();
            sending = eventId;
        }
        IncomingEvent event;
        try {
            event = reader.event(eventId);
        } catch (RuntimeException e) {
            int left = end() + 1;
            LOG.warn("push subscription {}: the cluster's stream cannot be read now ({}); the redelivery of its {} dead"
                    + " letters left ends, and they stay listed", subscriptionId, e.getMessage(), left);
            return;
        }
        PushRules rules = cursor.currentRules();
        if (event == null || !rules.passes(PublishedEvent.logged(eventId, event))) {
            // Gone from the stream since it was asked for, or no longer for this subscriber (its rules or its
            // publisher's authorization changed): not sent, and it stays listed.
            sendNext();
            return;
        }
        sender.postOnce(rules.target(), EventEncoding.pushed(event.json()),
                why -> answered(eventId, event.eventType(), why));
    }

    /** On an I/O thread: the rest on the letters' thread. */
    private void answered(long eventId, String eventType, FailedPost why) {
        try {
            thread.execute(() -> listAnswer(eventId, eventType, why));
        } catch (RejectedExecutionException e) {
            close();
        }
    }

    /**
     * Takes the letter off the list or keeps it with its new answer, and goes on to the next; if the list cannot be
     * written now, the redelivery ends there (said once): the rest would fail alike.
     */
    private void listAnswer(long eventId, String eventType, FailedPost why) {
        try {
            if (why == null) {
                bucket.remove(subscriptionId, eventId);
            } else {
                bucket.replace(SharedDeadLetters.letter(subscriptionId, eventId, eventType, why));
            }
        } catch (RuntimeException e) {
            int left = end();
            LOG.warn("push subscription {}: dead letter {} was redelivered ({}), but its list cannot be updated now"
                    + " ({}); the redelivery of its {} dead letters left ends, and they stay listed", subscriptionId,
                    eventId, why == null ? "taken" : why, e.getMessage(), left);
            return;
        }
        send();
    }

    /** Ends the redelivery under way. @return how many letters it had left to send */
    private synchronized int end() {
        int left = waiting.size();
        waiting.clear();
        sending = 0;
        return left;
    }
}

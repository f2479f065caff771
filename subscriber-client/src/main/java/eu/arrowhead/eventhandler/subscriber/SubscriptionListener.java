package eu.arrowhead.eventhandler.subscriber;

import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import java.time.Duration;

/**
 * Hears about the life of an {@link EventSubscriber}'s connection: connects, disconnects, gaps in the
 * replay, listener failures and the end of the subscription. Every method does nothing by default;
 * override the ones you need.
 *
 * <p>Methods are called on the subscription's own thread, never at the same time as each other or as the
 * {@link EventListener}. An exception thrown here is logged and otherwise ignored.
 */
public interface SubscriptionListener {

    /**
     * The server accepted the subscription and the stream is open: events follow. Called after every
     * successful (re)connection.
     */
    default void onConnected() {
    }

    /**
     * The connection failed or ended and the subscription will try again after {@code reconnectIn}.
     * Not called when the subscription ends for good; {@link #onStopped} is, instead.
     *
     * @param cause       what happened: an {@link java.io.IOException} such as a
     *                    {@link java.net.ConnectException} (refused), a {@link java.net.SocketTimeoutException}
     *                    (nothing, not even a heartbeat, arrived within the read timeout), an
     *                    {@link java.io.EOFException} (the server ended the stream), or a
     *                    {@link SubscriptionRefusedException} (a 5xx, 408 or 429 answer, or the server's
     *                    notice that it cannot serve the stream now, reported as 503)
     * @param reconnectIn how long the subscription waits before it connects again
     */
    default void onDisconnected(Throwable cause, Duration reconnectIn) {
    }

    /**
     * The server could not resume exactly where this subscription left off: events of the subscribed
     * types with ids in ({@code requestedAfterId}, {@code resumedAfterId}] may be missing. When
     * {@code resumedAfterId} is smaller than {@code requestedAfterId} the server's sequence started again
     * (a restart without an event store); the subscription then accepts the new, smaller ids.
     *
     * <p>{@link ReplayGap#maxMissingEvents()} says how many events of the subscribed types may be missing at
     * most (the ids in the hole; empty after a sequence restart, where it cannot be known). A gap comes from
     * retention (events older than the server keeps), from a crash of a server in {@code store.mode=async}
     * (the events it had acknowledged but not yet written, at most its {@code store.buffer-events}), or from a
     * damaged log; never from a clean restart, and a crash never makes one over events a
     * {@code store.mode=sync} server acknowledged.
     *
     * @param gap the server's notice
     */
    default void onReplayGap(ReplayGap gap) {
    }

    /**
     * The {@link EventListener} threw while handling {@code event}. The event counts as delivered and the
     * subscription goes on with the next one.
     *
     * @param event the event the listener failed on
     * @param error what it threw
     */
    default void onListenerError(Event event, Throwable error) {
    }

    /**
     * The subscription has ended for good; no other method is called after this one, and this one is
     * called once.
     *
     * @param cause null after {@link EventSubscriber#close()}; otherwise why the server refused the
     *              subscription for good, a {@link SubscriptionRefusedException} for a 4xx answer other
     *              than 408 and 429 (an invalid subscription, or 401/403 when the server requires
     *              authentication)
     */
    default void onStopped(Throwable cause) {
    }
}

/**
 * The subscriber client of the Event Handler: {@link eu.arrowhead.eventhandler.subscriber.EventSubscriber}
 * holds one Server-Sent Events stream to the server, reconnects on its own, and delivers each matching
 * event exactly once and in order to an {@link eu.arrowhead.eventhandler.subscriber.EventListener}.
 *
 * <p>Depends on the shared JSON model ({@code eventhandler-api}), Apache HttpClient 5, Jackson and
 * SLF4J; never on the server. Logs through SLF4J under the logger
 * {@code eu.arrowhead.eventhandler.subscriber.EventSubscriber}.
 */
package eu.arrowhead.eventhandler.subscriber;

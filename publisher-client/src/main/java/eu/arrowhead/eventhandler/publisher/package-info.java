/**
 * The publisher client of the Event Handler: {@link eu.arrowhead.eventhandler.publisher.EventPublisher}
 * publishes events over a pooled, kept-alive HTTP connection, one at a time, in batches, or queued in order
 * on a thread of its own.
 *
 * <p>Events and answers are the types of {@code eu.arrowhead.eventhandler.api}. A failed publish is a
 * {@link eu.arrowhead.eventhandler.publisher.PublishException}; what is retried, and what that means for
 * duplicates, is described by {@link eu.arrowhead.eventhandler.publisher.RetryPolicy}.
 */
package eu.arrowhead.eventhandler.publisher;

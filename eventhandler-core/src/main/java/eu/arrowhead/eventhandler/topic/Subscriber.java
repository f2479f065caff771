package eu.arrowhead.eventhandler.topic;

/** A receiver of a topic's events, registered with the {@link Hub}. */
public interface Subscriber {

    /** Which of its topics' events this subscriber wants. */
    SubscriberFilter filter();

    /**
     * Hands over an event that passed the filter. Called with the hub's lock held, in id order: it must
     * never block, and a subscriber that cannot keep up must drop itself rather than hold back the caller.
     *
     * @param publication the publish it comes from, to leave work for after the hub's lock; or
     *                    {@link Publication#NONE}
     */
    void offer(PublishedEvent event, Publication publication);

    /**
     * Told by the hub under its lock, as it registers this subscriber: it has every event of its topics up to
     * {@code id} already, and offers up to it are to be dropped. Only a resume on a cluster node whose feed has
     * not reached that id yet is told ({@link Hub#subscribe}); a subscriber that never resumes need not take it.
     */
    default void hasUpTo(long id) {
        throw new UnsupportedOperationException("this subscriber does not resume");
    }
}

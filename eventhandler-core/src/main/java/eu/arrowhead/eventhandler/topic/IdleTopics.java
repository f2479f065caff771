package eu.arrowhead.eventhandler.topic;

/**
 * The topics without a subscriber, least recently active first: the ones that may give way to a new topic at
 * {@code topic.max-count}, and the ones {@code topic.idle-seconds} removes. A list threaded through the topics
 * themselves, so that moving one to the newest end on a publish is a few assignments and allocates nothing,
 * and finding the topic to give way never scans the others. Not thread-safe: the hub's lock guards it.
 */
final class IdleTopics {
    private TopicBroadcaster oldest;
    private TopicBroadcaster newest;
    private int size;

    /** Appends a topic that has just lost its last subscriber, or is new. */
    void add(TopicBroadcaster topic) {
        topic.older = newest;
        topic.newer = null;
        if (newest == null) {
            oldest = topic;
        } else {
            newest.newer = topic;
        }
        newest = topic;
        topic.idle = true;
        size++;
    }

    /** Takes out a topic that has got a subscriber or is removed; nothing if it is not in the list. */
    void remove(TopicBroadcaster topic) {
        if (!topic.idle) {
            return;
        }
        if (topic.older == null) {
            oldest = topic.newer;
        } else {
            topic.older.newer = topic.newer;
        }
        if (topic.newer == null) {
            newest = topic.older;
        } else {
            topic.newer.older = topic.older;
        }
        topic.older = null;
        topic.newer = null;
        topic.idle = false;
        size--;
    }

    /** Moves a topic that was just active to the newest end, if it is in the list. */
    void touch(TopicBroadcaster topic) {
        if (topic.idle && topic != newest) {
            remove(topic);
            add(topic);
        }
    }

    /** The least recently active topic without a subscriber, or {@code null}. */
    TopicBroadcaster oldest() {
        return oldest;
    }

    int size() {
        return size;
    }
}

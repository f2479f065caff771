package eu.arrowhead.eventhandler.topic;

import java.util.HashSet;
import java.util.Set;

/**
 * Which event types a cluster node's feed reads from the stream, as its {@link Hub} last set it: every type, or
 * only those of {@code topicKeys}. The hub takes events only from a feed whose scope {@linkplain #covers covers}
 * its own ({@link Hub#deliver(ReadScope, long, java.util.List, Publication)}): a feed that never read a type a new
 * subscriber wants could otherwise move the hub past that type's events. A wider feed goes on delivering until the
 * narrower one replaces it.
 *
 * @param topicKeys the topics read, or {@code null} for every topic
 */
public record ReadScope(Set<String> topicKeys) {
    /** What a hub reads at its start: everything. */
    public static final ReadScope EVERY_TOPIC = new ReadScope(null);

    public ReadScope {
        topicKeys = topicKeys == null ? null : Set.copyOf(topicKeys);
    }

    /** Whether every topic is read. */
    public boolean readsEveryTopic() {
        return topicKeys == null;
    }

    /** Whether the events of this topic are read. */
    public boolean covers(String topicKey) {
        return topicKeys == null || topicKeys.contains(topicKey);
    }

    /** Whether every event {@code other} reads, this reads too. */
    public boolean covers(ReadScope other) {
        return topicKeys == null || other.topicKeys != null && topicKeys.containsAll(other.topicKeys);
    }

    /** This scope and {@code more} topics: every topic once they are more than {@code most}. */
    ReadScope with(Set<String> more, int most) {
        if (topicKeys == null) {
            return this;
        }
        Set<String> union = new HashSet<>(topicKeys);
        union.addAll(more);
        return union.size() > most ? EVERY_TOPIC : new ReadScope(union);
    }
}

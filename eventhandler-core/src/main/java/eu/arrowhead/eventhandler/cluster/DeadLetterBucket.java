package eu.arrowhead.eventhandler.cluster;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.store.SubscriptionStore.DeadLetter;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The push subscriptions' dead letters in a JetStream key-value bucket every node shares
 * ({@code <cluster.stream>_DEAD_LETTERS}, as many replicas as the stream): one key {@code <subscriptionId>.<eventId>}
 * per letter, its value the letter as JSON. A letter is removed by purging its subject from the bucket's stream, so
 * that no delete marker is left behind for each event ever set aside. Every call asks NATS: blocking.
 */
final class DeadLetterBucket {
    /** JetStream's error code for a write whose expected revision is not the key's (it exists, or changed). */
    private static final int WRONG_REVISION = 10071;
    private static final ObjectReader READER = JsonMapper.get().readerFor(DeadLetter.class);
    private static final ObjectWriter WRITER = JsonMapper.get().writerFor(DeadLetter.class);

    private final KeyValue bucket;
    private final JetStreamManagement management;

    DeadLetterBucket(KeyValue bucket, JetStreamManagement management) {
        this.bucket = bucket;
        this.management = management;
    }

    /** The bucket's name beside {@code stream}. */
    static String name(String stream) {
        return stream + "_DEAD_LETTERS";
    }

    private static String key(long subscriptionId, long eventId) {
        return subscriptionId + "." + eventId;
    }

    /**
     * Writes a new letter.
     *
     * @return false if the event is on the list already (set aside before, by this node or another)
     */
    boolean create(DeadLetter letter) {
        String key = key(letter.subscriptionId(), letter.eventId());
        return written(() -> bucket.create(key, WRITER.writeValueAsBytes(letter)));
    }

    /**
     * Replaces a letter that is listed with a newer one (another answer to it); one dropped meanwhile stays dropped.
     *
     * @return whether it was listed
     */
    boolean replace(DeadLetter letter) {
        String key = key(letter.subscriptionId(), letter.eventId());
        KeyValueEntry entry = entry(key);
        return entry != null && written(() -> bucket.update(key, WRITER.writeValueAsBytes(letter),
                entry.getRevision()));
    }

    /** A write that names the revision it expects the key at. */
    private interface Write {
        void run() throws IOException, JetStreamApiException;
    }

    /** @return false if the key was not at the revision the write expected */
    private static boolean written(Write write) {
        try {
            write.run();
            return true;
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == WRONG_REVISION) {
                return false;
            }
            throw failed("written", e);
        } catch (IOException e) {
            throw failed("written", e);
        }
    }

    /** The event ids on a subscription's list, in order. */
    List<Long> eventIds(long subscriptionId) {
        String prefix = subscriptionId + ".";
        List<Long> ids = new ArrayList<>();
        for (String key : keys(prefix + ">")) {
            ids.add(Long.parseLong(key.substring(prefix.length())));
        }
        ids.sort(null);
        return ids;
    }

    /** The subscriptions that have letters listed. */
    Set<Long> subscriptionIds() {
        Set<Long> ids = new TreeSet<>();
        for (String key : keys(">")) {
            String owner = key.substring(0, Math.max(0, key.indexOf('.')));
            if (!owner.isEmpty() && owner.chars().allMatch(Character::isDigit)) {
                ids.add(Long.parseLong(owner)); // not paused.<id> or row-start.<id> (SharedPauses)
            }
        }
        return ids;
    }

    private List<String> keys(String filter) {
        try {
            return bucket.keys(filter);
        } catch (IOException | JetStreamApiException e) {
            throw failed("read", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the cluster's dead letters", e);
        }
    }

    /** At most {@code limit} letters of a subscription after {@code afterEventId}, in event id order. */
    List<DeadLetter> list(long subscriptionId, long afterEventId, int limit) {
        List<DeadLetter> page = new ArrayList<>();
        for (long eventId : eventIds(subscriptionId)) {
            if (page.size() == limit) {
                break;
            }
            if (eventId > afterEventId) {
                DeadLetter letter = get(subscriptionId, eventId);
                if (letter != null) {
                    page.add(letter);
                }
            }
        }
        return page;
    }

    /** A subscription's letter of one event, or {@code null}: none is listed. */
    DeadLetter get(long subscriptionId, long eventId) {
        KeyValueEntry entry = entry(key(subscriptionId, eventId));
        try {
            return entry == null ? null : READER.readValue(entry.getValue());
        } catch (IOException e) {
            throw failed("read", e);
        }
    }

    /** A key's entry, or {@code null}: it holds no letter. */
    private KeyValueEntry entry(String key) {
        try {
            KeyValueEntry entry = bucket.get(key);
            return entry == null || entry.getValue() == null ? null : entry;
        } catch (IOException | JetStreamApiException e) {
            throw failed("read", e);
        }
    }

    /** Removes a subscription's letter of one event. @return whether it was listed */
    boolean remove(long subscriptionId, long eventId) {
        return purge(key(subscriptionId, eventId)) > 0;
    }

    /** Removes all of a subscription's letters. @return how many there were */
    int removeAll(long subscriptionId) {
        return (int) purge(subscriptionId + ".>");
    }

    /** Removes some of a subscription's letters. @return how many of them were listed */
    int remove(long subscriptionId, List<Long> eventIds) {
        int removed = 0;
        for (long eventId : eventIds) {
            if (remove(subscriptionId, eventId)) {
                removed++;
            }
        }
        return removed;
    }

    private long purge(String keys) {
        try {
            return SharedBucket.purge(management, bucket, keys);
        } catch (IOException | JetStreamApiException e) {
            throw failed("removed", e);
        }
    }

    private static IllegalStateException failed(String what, Exception e) {
        return new IllegalStateException("the cluster's dead letters cannot be " + what + " now: " + e.getMessage(), e);
    }
}

package eu.arrowhead.eventhandler.delivery;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;

/**
 * The resumes waiting for an event store reader, first come first served, with at most
 * {@code store.replay-queue-per-client} of them (waiting or being read) for one client: a client that opens
 * streams in a loop takes that many places in the readers' queue, not all of them, so everybody else's resume
 * still gets its turn.
 *
 * <p>A client is its system name in secure mode, else its address. A place whose client has left no longer
 * counts once the client asks for another. The places are a plain map under a lock, since a resume costs a
 * database read and this is nowhere near the publish path.
 */
final class ReplayQueue {
    private final Executor readers;
    private final int maxPerClient;
    /** Each client's places, in the order taken; guarded by this. */
    private final Map<String, List<Place>> places = new HashMap<>();

    /** One resume's place: waiting for a reader, or being read. */
    private static final class Place {
        final BooleanSupplier wanted;

        Place(BooleanSupplier wanted) {
            this.wanted = wanted;
        }
    }

    /** @param readers a bounded pool whose rejection refuses the resume for now */
    ReplayQueue(Executor readers, int maxPerClient) {
        this.readers = readers;
        this.maxPerClient = maxPerClient;
    }

    /**
     * Queues the read of one resume.
     *
     * @param wanted whether the resume's client is still there: the places of those that left are given back
     *               when the client needs one, without waiting for their turn
     * @return false, and nothing is queued, if the client already has its share of places
     * @throws RejectedExecutionException if the readers' queue is full
     */
    boolean submit(String client, BooleanSupplier wanted, Runnable read) {
        Place place = take(client, wanted);
        if (place == null) {
            return false;
        }
        try {
            readers.execute(() -> {
                try {
                    read.run();
                } finally {
                    giveBack(client, place);
                }
            });
        } catch (RejectedExecutionException e) {
            giveBack(client, place);
            throw e;
        }
        return true;
    }

    private synchronized Place take(String client, BooleanSupplier wanted) {
        List<Place> held = places.computeIfAbsent(client, key -> new ArrayList<>());
        if (held.size() >= maxPerClient) {
            held.removeIf(place -> !place.wanted.getAsBoolean());
            if (held.size() >= maxPerClient) {
                return null;
            }
        }
        Place place = new Place(wanted);
        held.add(place);
        return place;
    }

    private synchronized void giveBack(String client, Place place) {
        List<Place> held = places.get(client);
        if (held != null && held.remove(place) && held.isEmpty()) {
            places.remove(client);
        }
    }
}

package eu.arrowhead.eventhandler.delivery;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The resumes waiting for an event store reader, first come first served, with at most
 * {@code store.replay-queue-per-client} of them (waiting or being read) for one client: a client that opens
 * streams in a loop takes that many places in the readers' queue, not all of them, so everybody else's resume
 * still gets its turn.
 *
 * <p>A client is its system name in secure mode, else its address. A place is given back when its read has run,
 * also when the client left meanwhile (the read then ends at once): counting only the clients still there would
 * let one client fill the readers' queue by opening and dropping resumes in a loop. The count is a plain map
 * under a lock, since a resume costs a database read and this is nowhere near the publish path.
 */
final class ReplayQueue {
    private final Executor readers;
    private final int maxPerClient;
    private final Map<String, Integer> perClient = new HashMap<>();

    /** @param readers a bounded pool whose rejection refuses the resume for now */
    ReplayQueue(Executor readers, int maxPerClient) {
        this.readers = readers;
        this.maxPerClient = maxPerClient;
    }

    /**
     * Queues the read of one resume.
     *
     * @return false, and nothing is queued, if the client already has its share of places
     * @throws RejectedExecutionException if the readers' queue is full
     */
    boolean submit(String client, Runnable read) {
        if (!take(client)) {
            return false;
        }
        try {
            readers.execute(() -> {
                try {
                    read.run();
                } finally {
                    giveBack(client);
                }
            });
        } catch (RejectedExecutionException e) {
            giveBack(client);
            throw e;
        }
        return true;
    }

    private synchronized boolean take(String client) {
        int held = perClient.getOrDefault(client, 0);
        if (held >= maxPerClient) {
            return false;
        }
        perClient.put(client, held + 1);
        return true;
    }

    private synchronized void giveBack(String client) {
        perClient.computeIfPresent(client, (key, held) -> held == 1 ? null : held - 1);
    }
}

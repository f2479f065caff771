package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answers to recent publishes that carried an {@code Idempotency-Key} header, so that a publisher that
 * lost an answer and sends the same request again with the same key gets the same ids instead of publishing
 * the events twice: its retries become exactly-once.
 *
 * <p>A key is remembered for {@code publish.idempotency-window-seconds} after its publish, per caller (in
 * secure mode another system's key is another key), and at most {@code publish.idempotency-max-keys} keys
 * are: past that the oldest are forgotten early and counted ({@link #forgottenEarly()}), since a retry of a
 * forgotten key publishes again. A key takes at most
 * {@value eu.arrowhead.eventhandler.config.EventHandlerConfig#IDEMPOTENCY_KEY_BYTES} bytes of heap (it is at most
 * {@value #MAX_KEY_LENGTH} characters), under 2 MiB at the default 4 096; the start is refused if the
 * configured count could take more than a sixteenth of the heap.
 *
 * <p>A journal that keeps events keeps each key with them, in the same commit ({@link EventJournal#append}); at
 * start the keys of the last window are taken back from it ({@link #restore}), so that a retry after a restart,
 * or after a crash that kept its events, is answered too, still without a database read per publish.
 *
 * <p>A request with a known key is answered from here: with the first request's ids once its events are
 * accepted (committed, in {@code store.mode=sync}); with {@code 503} and {@code Retry-After} while the first
 * is still being handled; with {@code 422} if it is not the same request (method, path and body). Thread-safe.
 */
public final class IdempotencyKeys {
    /** The header a publisher names its request with. */
    public static final String HEADER = "Idempotency-Key";
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeys.class);
    static final int MAX_KEY_LENGTH = 128;

    private final long windowNanos;
    private final int maxKeys;
    private final LongSupplier clock;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final LongAdder forgottenEarly = new LongAdder();

    /**
     * @param clock nanoseconds, as {@link System#nanoTime}
     */
    public IdempotencyKeys(Duration window, int maxKeys, LongSupplier clock) {
        this.windowNanos = window.toNanos();
        this.maxKeys = maxKeys;
        this.clock = clock;
    }

    /**
     * The key a request's header gives, checked: 1 to {@value #MAX_KEY_LENGTH} visible ASCII characters.
     *
     * @param header the header's value; {@code null} when the request has none
     * @return the key, or {@code null} for a request without one
     * @throws RequestException 400 for a key that breaks those rules
     */
    public static String checkedKey(String header) {
        if (header == null) {
            return null;
        }
        if (header.isEmpty() || header.length() > MAX_KEY_LENGTH) {
            throw RequestException.invalidParameter(HEADER + " must be 1 to " + MAX_KEY_LENGTH + " characters long;"
                    + " this one has " + header.length());
        }
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                throw RequestException.invalidParameter(HEADER + " may hold only visible ASCII characters (found"
                        + " U+" + String.format("%04X", (int) c) + " at position " + (i + 1) + ")");
            }
        }
        return header;
    }

    /**
     * Takes a keyed request: either it is new, and the caller publishes it and then calls
     * {@link Claim#accepted} or {@link Claim#failed}, or it was answered before and {@link Claim#firstId} is its
     * answer.
     *
     * @throws RequestException         422 if the key was used for another request
     * @throws UnavailableException  while the first request with the key is still being handled
     */
    Claim claim(PublishKey request) {
        String scoped = scoped(request);
        long now = clock.getAsLong();
        synchronized (entries) {
            Entry known = answeredBefore(scoped, request, now);
            if (known != null) {
                return new Claim(this, scoped, known, false);
            }
            Entry fresh = new Entry(request.fingerprint(), now);
            entries.put(scoped, fresh);
            if (entries.size() > maxKeys) {
                Iterator<Entry> oldest = entries.values().iterator();
                oldest.next();
                oldest.remove();
                forgottenEarly.increment();
            }
            return new Claim(this, scoped, fresh, true);
        }
    }

    /**
     * The ids an earlier request with the key was answered with, or {@code null} if there is none (its events were
     * refused, or the key is new). Asked before a request's body is even parsed, so that a publisher's retry gets
     * its answer whatever has changed since: the writer behind, the database down, the clock moved on.
     *
     * @throws RequestException     422 if the key was used for another request
     * @throws UnavailableException while the first request with the key is still being handled
     */
    long[] answered(PublishKey request) {
        synchronized (entries) {
            Entry known = answeredBefore(scoped(request), request, clock.getAsLong());
            if (known == null) {
                return null;
            }
            long[] ids = new long[known.count];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = known.firstId + i;
            }
            return ids;
        }
    }

    /**
     * Takes back the keys the journal kept with their events in earlier runs ({@link EventJournal#recentKeys}: the
     * newest {@code publish.idempotency-max-keys} of the last window), each for what is left of its window, so that
     * a retry after a restart or a crash is answered from memory like any other. Called once, before the first
     * publish. A journal that cannot be read now costs the keys, not the start: it is said once, at WARN.
     */
    void restore(EventJournal journal) {
        List<StoredKey> kept;
        try {
            kept = journal.recentKeys(Duration.ofNanos(windowNanos), maxKeys);
        } catch (RuntimeException e) {
            LOG.warn("the Idempotency-Keys of the last {} s cannot be read back from the event log ({}): a retry of"
                    + " a publish from before this start publishes it again", windowNanos / 1_000_000_000, e.toString());
            return;
        }
        restore(kept);
        if (!kept.isEmpty()) {
            LOG.info("{} Idempotency-Keys of the last {} s taken back from the event log", kept.size(),
                    windowNanos / 1_000_000_000);
        }
    }

    /** Takes back keys kept in earlier runs, oldest first, each for what is left of its window. */
    void restore(List<StoredKey> kept) {
        long nowNanos = clock.getAsLong();
        long nowMillis = System.currentTimeMillis();
        synchronized (entries) {
            for (StoredKey stored : kept) {
                long ageNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, nowMillis - stored.createdMillis()));
                Entry entry = new Entry(stored.key().fingerprint(), nowNanos - ageNanos);
                entry.firstId = stored.firstId();
                entry.count = stored.count();
                entry.committed = EventJournal.COMMITTED;
                String scoped = scoped(stored.key());
                // The same key again (its first window had ended): the later one answers, in its place in time.
                entries.remove(scoped);
                entries.put(scoped, entry);
            }
        }
    }

    private static String scoped(PublishKey request) {
        return request.scope() + '\n' + request.key();
    }

    /** The entry of an accepted earlier request with the key, or {@code null}; guarded by the map's monitor. */
    private Entry answeredBefore(String scoped, PublishKey request, long now) {
        forgetExpired(now);
        Entry known = entries.get(scoped);
        if (known == null) {
            return null;
        }
        if (known.fingerprint != request.fingerprint()) {
            throw usedForAnotherRequest(request.key(), Duration.ofNanos(windowNanos));
        }
        if (known.committed == null || !known.committed.isDone()) {
            throw new UnavailableException("the request with " + HEADER + " '" + request.key() + "' is still"
                    + " being handled; ask again for its answer");
        }
        if (!known.committed.isCompletedExceptionally()) {
            return known;
        }
        // Its events were refused after all (the store failed in sync mode): this one publishes them.
        entries.remove(scoped);
        return null;
    }

    /** The answer to a key that named another request within {@code window}: 422. */
    public static RequestException usedForAnotherRequest(String key, Duration window) {
        return new RequestException(422, ExceptionType.BAD_PAYLOAD, HEADER + " '" + key + "' was used for another"
                + " request within the last " + window.toSeconds() + " s; use a new key for a new request");
    }

    /** Keys forgotten before their window ended because {@code publish.idempotency-max-keys} were held. */
    public long forgottenEarly() {
        return forgottenEarly.sum();
    }

    /** Keys held now. */
    public int size() {
        synchronized (entries) {
            return entries.size();
        }
    }

    private void forgetExpired(long now) {
        Iterator<Entry> oldest = entries.values().iterator();
        while (oldest.hasNext()) {
            Entry entry = oldest.next();
            if (now - entry.createdNanos < windowNanos) {
                return;
            }
            oldest.remove();
        }
    }

    /** CRC-32C of the path and body: tells a retry from another request under the same key. */
    public static long fingerprint(String path, byte[] request) {
        CRC32C crc = new CRC32C();
        for (int i = 0; i < path.length(); i++) {
            crc.update(path.charAt(i));
        }
        crc.update(request);
        return crc.getValue() ^ ((long) request.length << 32);
    }

    /**
     * A keyed request in hand.
     */
    static final class Claim {
        private final IdempotencyKeys keys;
        private final String scoped;
        private final Entry entry;
        private final boolean fresh;

        private Claim(IdempotencyKeys keys, String scoped, Entry entry, boolean fresh) {
            this.keys = keys;
            this.scoped = scoped;
            this.entry = entry;
            this.fresh = fresh;
        }

        /** Whether this request is the first with its key: the caller publishes it. */
        boolean fresh() {
            return fresh;
        }

        /** The first id the request was answered with (for one answered before). */
        long firstId() {
            return entry.firstId;
        }

        /** How many events the request published (for one answered before). */
        int count() {
            return entry.count;
        }

        /**
         * The log gave the {@code count} events ids from {@code firstId}; they are in the log once
         * {@code committed} completes, and a retry is answered with them from then on.
         */
        void accepted(long firstId, int count, CompletableFuture<Void> committed) {
            synchronized (keys.entries) {
                entry.firstId = firstId;
                entry.count = count;
                entry.committed = committed;
            }
        }

        /**
         * The request failed. If its events got no ids, a retry publishes them; if they did (a commit that
         * did not come in time), the key stays, and a retry learns what became of them.
         */
        void failed() {
            synchronized (keys.entries) {
                if (entry.committed == null) {
                    keys.entries.remove(scoped, entry);
                }
            }
        }
    }

    /** What is known of a keyed request; guarded by the map's monitor. */
    private static final class Entry {
        final long fingerprint;
        final long createdNanos;
        long firstId;
        int count;
        CompletableFuture<Void> committed;

        Entry(long fingerprint, long createdNanos) {
            this.fingerprint = fingerprint;
            this.createdNanos = createdNanos;
        }
    }
}

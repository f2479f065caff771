package eu.arrowhead.eventhandler.publisher;

import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code Idempotency-Key} of each publish: sent with every attempt of it, so that a server that
 * remembers keys answers a retry after a lost answer with the first attempt's ids instead of publishing the
 * events again. A random prefix per publisher and a counter: unique without a random number per publish.
 * Thread-safe.
 */
final class RequestKeys {
    static final String HEADER = "Idempotency-Key";
    /** The longest key the server takes. */
    static final int MAX_LENGTH = 128;

    private final String prefix = UUID.randomUUID() + "-";
    private final AtomicLong counter = new AtomicLong();

    /** A key no other publish of any publisher has used. */
    String next() {
        return prefix + counter.incrementAndGet();
    }

    /**
     * Checks a key an application gives, by the server's rules: 1 to {@value #MAX_LENGTH} visible ASCII
     * characters.
     *
     * @throws NullPointerException     if it is null
     * @throws IllegalArgumentException if it breaks those rules
     */
    static void check(String key) {
        Objects.requireNonNull(key, "idempotencyKey");
        if (key.isEmpty() || key.length() > MAX_LENGTH || !key.chars().allMatch(c -> c >= 0x21 && c <= 0x7e)) {
            throw new IllegalArgumentException(HEADER + " must be 1 to " + MAX_LENGTH + " visible ASCII characters: '"
                    + key + "'");
        }
    }
}

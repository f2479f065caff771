package eu.arrowhead.eventhandler.publisher;

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

    private final String prefix = UUID.randomUUID() + "-";
    private final AtomicLong counter = new AtomicLong();

    /** A key no other publish of any publisher has used. */
    String next() {
        return prefix + counter.incrementAndGet();
    }
}

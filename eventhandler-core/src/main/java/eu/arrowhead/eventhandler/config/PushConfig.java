package eu.arrowhead.eventhandler.config;

import java.time.Duration;
import java.util.List;

/**
 * Arrowhead 4.x push subscriptions: how events are POSTed to subscribers' notify URIs. The keys are
 * documented in the {@code Push subscriptions} section of {@code config/eventhandler.properties}.
 *
 * <p>With a cursor in the event log, a POST its subscriber refuses for good (a 4xx other than 408 and 429) is tried
 * {@code poisonRetries} more times and then set aside on the subscription's dead-letter list, which keeps at most
 * {@code deadLetterMax} entries; {@code pauseAfterDeadLetters} set aside in a row pause the subscription (0: never).
 */
public record PushConfig(
        int maxSubscriptions,
        int queueCapacity,
        long totalMaxBytes,
        int maxRetries,
        Duration retryInitialBackoff,
        Duration retryMaxBackoff,
        Duration connectTimeout,
        Duration responseTimeout,
        int connectionsPerTarget,
        int senderThreads,
        List<AddressRange> allowedTargets,
        List<AddressRange> deniedTargets,
        int poisonRetries,
        int deadLetterMax,
        int pauseAfterDeadLetters) {

    /** The pause before retry {@code retry + 1} (from 0): doubling from the initial backoff, capped. */
    public Duration backoff(long retry) {
        Duration pause = retryInitialBackoff.multipliedBy(1L << Math.min(Math.max(retry, 0), 30));
        return pause.compareTo(retryMaxBackoff) > 0 || pause.isNegative() ? retryMaxBackoff : pause;
    }

    static PushConfig from(ConfigValues v, HeapBudget heap) {
        return new PushConfig(
                v.integer("push.max-subscriptions", 1, 10_000_000),
                v.integer("push.queue-capacity", 1, 10_000_000),
                v.heapBytes("push.total-max-bytes", heap.push(), heap),
                v.integer("push.max-retries", 0, 1000),
                Duration.ofMillis(v.longInteger("push.retry-initial-millis", 1, 3_600_000)),
                Duration.ofMillis(v.longInteger("push.retry-max-millis", 1, 3_600_000)),
                v.seconds("push.connect-timeout-seconds", 1),
                v.seconds("push.response-timeout-seconds", 1),
                v.integer("push.connections-per-target", 1, 1000),
                v.threads("push.sender-threads"),
                v.addressRanges("push.allowed-targets"),
                v.addressRanges("push.denied-targets"),
                v.integer("push.poison-retries", 0, 1000),
                v.integer("push.dead-letter-max", 1, 10_000),
                v.integer("push.pause-after-dead-letters", 0, 100_000));
    }
}

package eu.arrowhead.eventhandler.topic;

/**
 * A publish request's {@code Idempotency-Key}, as the event log dedupes it.
 *
 * @param scope       the caller (its name in secure mode), so that two systems' keys never meet
 * @param key         the key, or {@code null} for a request without one
 * @param fingerprint what tells a repeat of the request from another request under the same key
 */
public record PublishKey(String scope, String key, long fingerprint) {
    /** A request without a key: never a repeat. */
    public static final PublishKey NONE = new PublishKey(null, null, 0);

    public boolean present() {
        return key != null;
    }
}

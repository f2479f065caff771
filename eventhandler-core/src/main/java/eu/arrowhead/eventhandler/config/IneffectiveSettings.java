package eu.arrowhead.eventhandler.config;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses a configuration in which a setting is set but cannot take effect: an operator who sets a key
 * expects it to change something, and a server that starts anyway hides the mistake until it matters (an
 * ACL that protects nothing in insecure mode, a Service Registry address that is never called). "Set" means
 * given a value other than the packed default, in the file, the environment or on the command line; a
 * default that cannot take effect is no one's mistake.
 */
final class IneffectiveSettings {
    private static final Logger LOG = LoggerFactory.getLogger(IneffectiveSettings.class);
    private static final List<String> TLS_KEYS = List.of("server.ssl.key-store", "server.ssl.key-store-password",
            "server.ssl.key-password", "server.ssl.trust-store", "server.ssl.trust-store-password");
    private static final List<String> AUTHORIZATION_KEYS = List.of("security.authorization.uri",
            "security.authorization.start-retries", "security.authorization.retry-seconds",
            "security.authorization.recheck-seconds");
    private static final List<String> REGISTRY_KEYS = List.of("arrowhead.service-registry.uri",
            "arrowhead.service-registry.retry-seconds", "arrowhead.service-registry.timeout-seconds",
            "arrowhead.system-name", "arrowhead.system-address");
    private static final List<String> STORE_KEYS = List.of("store.url", "store.user", "store.password",
            "store.pool-size", "store.timeout-seconds", "store.batch-events", "store.buffer-events", "store.buffer-bytes",
            "store.sync-timeout-seconds", "store.retention-seconds", "store.retention-events",
            "store.retention-check-seconds", "store.replay-page-events", "store.replay-queue-per-client",
            "store.replay-events-per-second",
            "store.query-max-events", "store.id-mark-file");
    /** What a node in cluster mode does not use: its log is the stream; replays and queries are still paged. */
    private static final List<String> CLUSTER_STORE_KEYS = List.of("store.mode", "store.url", "store.user",
            "store.password", "store.pool-size", "store.timeout-seconds", "store.batch-events", "store.buffer-events",
            "store.buffer-bytes", "store.sync-timeout-seconds", "store.retention-seconds", "store.retention-events",
            "store.retention-check-seconds", "store.id-mark-file");
    private static final List<String> RETRY_KEYS = List.of("push.retry-initial-millis", "push.retry-max-millis");
    /** What a push subscription's queue in memory takes; with an event log it has a cursor there instead. */
    private static final List<String> PUSH_QUEUE_KEYS = List.of("push.queue-capacity", "push.max-retries");
    /** What only a cursor (in the event log or the cluster's stream) does: set a refused event aside. */
    private static final List<String> DEAD_LETTER_KEYS = List.of("push.poison-retries", "push.dead-letter-max",
            "push.pause-after-dead-letters");

    private IneffectiveSettings() {
    }

    /**
     * @param set the keys whose value is not the packed default
     * @throws ConfigException naming the first key that cannot take effect, and why
     */
    static void refuse(EventHandlerConfig config, Set<String> set) {
        SecurityConfig security = config.security();
        if (!security.sslEnabled()) {
            refuseAny(set, TLS_KEYS, "server.ssl.enabled is false: the key store and trust store are read in"
                    + " secure mode only (set server.ssl.enabled=true, or remove the setting)");
            refuseAny(set, List.of("security.acl-file"), "server.ssl.enabled is false: the ACL applies to the"
                    + " identities of client certificates, which only secure mode has");
            if (security.authorizationEnabled()) {
                refuseHttps("security.authorization.uri", security.authorizationUri().getScheme(),
                        "the Authorization system");
            }
            if (config.serviceRegistry().enabled()) {
                refuseHttps("arrowhead.service-registry.uri", config.serviceRegistry().uri().getScheme(),
                        "the Service Registry");
            }
        }
        if (!security.authorizationEnabled()) {
            refuseAny(set, AUTHORIZATION_KEYS, "security.authorization.enabled is false: the Authorization system"
                    + " is not asked");
        }
        if (!config.serviceRegistry().enabled()) {
            refuseAny(set, REGISTRY_KEYS, "arrowhead.service-registry.enabled is false: the Event Handler does"
                    + " not register in a Service Registry");
        }
        if (config.storeMode() == EventHandlerConfig.StoreMode.OFF) {
            refuseAny(set, STORE_KEYS, "store.mode is off: there is no event store");
            refuseAny(set, DEAD_LETTER_KEYS, "store.mode is off: a push subscriber's queue in memory drops an event"
                    + " after push.max-retries, whatever the answer");
        } else if (config.storeRetentionAge().isZero() && config.storeRetentionEvents() == 0) {
            refuseAny(set, List.of("store.retention-check-seconds"), "store.retention-seconds and"
                    + " store.retention-events are both 0: there is no retention to check");
        }
        if (!config.cluster().enabled()) {
            refuseAny(set, ClusterConfig.KEYS, "cluster.enabled is false: this Event Handler runs alone");
        } else {
            refuseAny(set, CLUSTER_STORE_KEYS, "cluster.enabled is true: the event log is the cluster's JetStream"
                    + " stream (cluster.*), not a database");
            refuseAny(set, PUSH_QUEUE_KEYS, "cluster.enabled is true: " + cursorDelivery("the cluster's stream",
                    "cluster.retention-*"));
            PushConfig push = config.push();
            if (push.pauseAfterDeadLetters() > push.deadLetterMax()) {
                // The cluster counts a row of letters on the shared list, which keeps no more: it would never pause.
                throw new ConfigException("push.pause-after-dead-letters=" + push.pauseAfterDeadLetters()
                        + " is more than push.dead-letter-max=" + push.deadLetterMax() + ": in cluster mode a row of"
                        + " letters is counted on the list, which keeps no more; raise push.dead-letter-max or lower"
                        + " push.pause-after-dead-letters (0 never pauses)");
            }
        }
        if (!config.cluster().enabled() && config.storeMode() != EventHandlerConfig.StoreMode.OFF) {
            String cursor = cursorDelivery("the event log", "store.retention-*");
            refuseAny(set, List.of("push.queue-capacity"), "store.mode is "
                    + config.storeMode().name().toLowerCase(Locale.ROOT) + ": " + cursor);
            if (set.contains("push.max-retries")) {
                // Not refused like push.queue-capacity: 4.x configurations being migrated set it (4.x made one
                // attempt), and without it nothing is lost, a cursor only retries more.
                LOG.warn("push.max-retries is set, but it has no effect with an event store: {}; an event its"
                        + " subscriber refuses for good (4xx) is set aside after push.poison-retries; push.max-retries"
                        + " applies with store.mode=off only", cursor);
            }
        }
        PushConfig push = config.push();
        // Only a queue in memory gives up after push.max-retries; a cursor (in the log or the cluster's stream)
        // always retries with these pauses.
        boolean queueInMemory = !config.cluster().enabled() && config.storeMode() == EventHandlerConfig.StoreMode.OFF;
        if (queueInMemory && push.maxRetries() == 0) {
            refuseAny(set, RETRY_KEYS, "push.max-retries is 0 and store.mode is off: a failed POST is not retried");
        } else if (push.retryInitialBackoff().compareTo(push.retryMaxBackoff()) > 0) {
            throw new ConfigException("push.retry-initial-millis (" + push.retryInitialBackoff().toMillis()
                    + ") is longer than push.retry-max-millis (" + push.retryMaxBackoff().toMillis() + "), the"
                    + " longest pause between retries, so it cannot take effect");
        }
        if (config.maxPayloadBytes() > config.maxRequestBytes()) {
            throw new ConfigException("publish.max-payload-bytes (" + config.maxPayloadBytes() + ") is larger than"
                    + " publish.max-request-bytes (" + config.maxRequestBytes() + "): a request that carried such a"
                    + " payload would be refused first, so the payload limit cannot take effect");
        }
    }

    /** What replaces a push subscription's queue in memory when there is a log: its cursor there. */
    private static String cursorDelivery(String log, String retention) {
        return "a push subscription is delivered from its own cursor in " + log + ", a failed POST tried again with"
                + " pauses from push.retry-initial-millis to push.retry-max-millis until its subscriber takes it,"
                + " the events behind it for as long as the log holds them (" + retention + "), and what push"
                + " holds in memory is bounded by push.total-max-bytes";
    }

    private static void refuseAny(Set<String> set, List<String> keys, String why) {
        for (String key : keys) {
            if (set.contains(key)) {
                throw new ConfigException(key + " is set, but it cannot take effect: " + why);
            }
        }
    }

    /** Without secure mode the Event Handler has no certificate to present to a core system over https. */
    private static void refuseHttps(String key, String scheme, String system) {
        if ("https".equals(scheme)) {
            throw new ConfigException(key + " is an https URL, but server.ssl.enabled is false: " + system + " of"
                    + " a secure local cloud takes only clients with a certificate, which the Event Handler has in"
                    + " secure mode only. In an insecure local cloud it answers on http://");
        }
    }
}

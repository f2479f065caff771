package eu.arrowhead.eventhandler.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Cluster mode: several Event Handler nodes sharing one NATS JetStream stream as the log of every event (its
 * sequence is the global event id). The keys are documented in the {@code Cluster mode} section of
 * {@code config/eventhandler.properties} and in docs/cluster.md.
 *
 * @param enabled          {@code cluster.enabled}
 * @param natsUrls         the NATS servers to connect to, any of them will do
 * @param nodeName         this node's name, as the NATS servers and {@code mgmt/health} show it; empty: the host
 *                         name and process id
 * @param stream           the JetStream stream's name
 * @param subjectPrefix    events of type T are published to {@code <prefix>.<t>}
 * @param replicas         copies of the stream (1, 3 or 5); a publish is answered once they have it
 * @param maxAge           the stream keeps events this long; zero for no limit
 * @param maxEvents        the stream keeps at most this many events; 0 for no limit
 * @param duplicateWindow  how long the stream remembers an {@code Idempotency-Key}
 * @param timeout          longest wait for a NATS answer (a publish's acknowledgement, a replay's read)
 * @param outageGrace      how long the node may be cut off from NATS before it ends its streams
 * @param maxPendingAcks   the most acknowledgements the node awaits from the stream at once
 *                         ({@link #PENDING_ACK_BYTES})
 * @param firstId          when the stream is created: the id its first event gets (migration of a single-node log)
 * @param link             TLS and credentials of the link to NATS
 */
public record ClusterConfig(
        boolean enabled,
        List<String> natsUrls,
        String nodeName,
        String stream,
        String subjectPrefix,
        int replicas,
        Duration maxAge,
        long maxEvents,
        Duration duplicateWindow,
        Duration timeout,
        Duration outageGrace,
        int maxPendingAcks,
        long firstId,
        NatsLinkConfig link) {

    /** The keys that only cluster mode reads. */
    static final List<String> KEYS = Stream.concat(Stream.of("cluster.nats-urls", "cluster.node-name",
            "cluster.stream", "cluster.subject-prefix", "cluster.replicas", "cluster.retention-seconds",
            "cluster.retention-events", "cluster.duplicate-window-seconds", "cluster.timeout-seconds",
            "cluster.outage-grace-millis", "cluster.max-pending-acks", "cluster.first-id"),
            NatsLinkConfig.KEYS.stream()).toList();

    /**
     * Heap one acknowledgement awaited from the stream holds, each sending of an event one: jnats' future for the
     * answer, its entry and token in jnats' table of awaited answers, the future its {@code publishAsync} composes
     * and ours that follows it. Measured with {@code jmap -histo:live} on a {@code -Xmx64m} node whose NATS server
     * was stopped (SIGSTOP) while 3 000 keyed events were sent again and again: 12 000 sendings held 5.0 MB, 417
     * bytes each with the requests themselves. Charged 512: a sending that jnats has not yet written (its server's
     * socket full) holds its headers as well. The event's own bytes are the request's, counted with the request
     * bodies.
     */
    public static final long PENDING_ACK_BYTES = 512;
    /** The most a key may ask for, whatever the heap. */
    public static final int MOST_PENDING_ACKS = 1_000_000;

    static ClusterConfig from(ConfigValues v, SecurityConfig security, HeapBudget heap) {
        boolean enabled = v.bool("cluster.enabled");
        List<String> urls = natsUrls(v);
        return new ClusterConfig(
                enabled,
                urls,
                v.text("cluster.node-name").strip(),
                name(v, "cluster.stream"),
                subjectPrefix(v),
                replicas(v),
                v.seconds("cluster.retention-seconds", 0),
                v.longInteger("cluster.retention-events", 0, Long.MAX_VALUE),
                duplicateWindow(v),
                v.seconds("cluster.timeout-seconds", 1),
                v.millis("cluster.outage-grace-millis", 0, 3_600_000),
                maxPendingAcks(v, enabled, heap),
                v.longInteger("cluster.first-id", 1, Long.MAX_VALUE / 2),
                NatsLinkConfig.from(v, enabled, urls, security));
    }

    /**
     * Within the 2/19 of the heap a single node gives its store buffer. Read as a plain number in single-node mode,
     * where setting it is refused as a key that cannot take effect.
     */
    private static int maxPendingAcks(ConfigValues v, boolean enabled, HeapBudget heap) {
        return enabled ? v.countWithinShare("cluster.max-pending-acks", MOST_PENDING_ACKS, heap.storeBuffer(),
                PENDING_ACK_BYTES, "the 2/19 a single node gives its store buffer", "", heap)
                : v.integer("cluster.max-pending-acks", 0, MOST_PENDING_ACKS);
    }

    /** This configuration with another {@code cluster.first-id}: a migrated log's stream starts at its first id. */
    public ClusterConfig withFirstId(long id) {
        return new ClusterConfig(enabled, natsUrls, nodeName, stream, subjectPrefix, replicas, maxAge, maxEvents,
                duplicateWindow, timeout, outageGrace, maxPendingAcks, id, link);
    }

    private static List<String> natsUrls(ConfigValues v) {
        String value = v.text("cluster.nats-urls");
        List<String> urls = new ArrayList<>();
        for (String part : value.split(",")) {
            String url = part.strip();
            if (url.isEmpty()) {
                continue;
            }
            try {
                URI uri = new URI(url);
                if (uri.getRawUserInfo() != null) {
                    // Printed in the effective configuration and in refusals: the secret keys are masked, URLs not.
                    throw new ConfigException("cluster.nats-urls: a URL with a user or token in it would be logged;"
                            + " give them as cluster.user and cluster.password, or cluster.token");
                }
                if (("nats".equals(uri.getScheme()) || "tls".equals(uri.getScheme())) && uri.getHost() != null
                        && uri.getPort() > 0) {
                    urls.add(url);
                    continue;
                }
            } catch (URISyntaxException e) {
                // reported below, with the key
            }
            throw new ConfigException("cluster.nats-urls: '" + url + "' is not a NATS URL; expected a comma-separated"
                    + " list such as nats://10.0.0.1:4222,nats://10.0.0.2:4222");
        }
        if (urls.isEmpty()) {
            throw new ConfigException("cluster.nats-urls is empty; name at least one NATS server, such as"
                    + " nats://127.0.0.1:4222");
        }
        return List.copyOf(urls);
    }

    /** A stream name as JetStream takes it: letters, digits, - and _. */
    private static String name(ConfigValues v, String key) {
        String value = v.text(key).strip();
        if (!value.matches("[A-Za-z0-9_-]{1,64}")) {
            throw new ConfigException(key + "=" + value + ": expected 1 to 64 letters, digits, - or _");
        }
        return value;
    }

    /** Subject tokens separated by dots, without wildcards. */
    private static String subjectPrefix(ConfigValues v) {
        String value = v.text("cluster.subject-prefix").strip();
        if (!value.matches("[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*") || value.length() > 64) {
            throw new ConfigException("cluster.subject-prefix=" + value + ": expected dot-separated tokens of"
                    + " letters, digits, - or _, such as eventhandler.events");
        }
        return value;
    }

    /**
     * JetStream refuses a stream whose duplicate window outlasts its events (error 10052), so such a node could not
     * start: said here in this file's keys rather than in the stream's.
     */
    private static Duration duplicateWindow(ConfigValues v) {
        Duration window = v.seconds("cluster.duplicate-window-seconds", 1);
        Duration maxAge = v.seconds("cluster.retention-seconds", 0);
        if (!maxAge.isZero() && window.compareTo(maxAge) > 0) {
            throw new ConfigException("cluster.duplicate-window-seconds=" + window.toSeconds() + " is longer than"
                    + " cluster.retention-seconds=" + maxAge.toSeconds() + ": the stream cannot remember an"
                    + " Idempotency-Key longer than it keeps events; lower the window or keep events longer");
        }
        Duration timeout = v.seconds("cluster.timeout-seconds", 1);
        if (window.compareTo(timeout.multipliedBy(2)) < 0) {
            throw new ConfigException("cluster.duplicate-window-seconds=" + window.toSeconds() + " is shorter than"
                    + " twice cluster.timeout-seconds=" + timeout.toSeconds() + ": a keyed event sent again while"
                    + " the stream elects a leader could be stored twice; lengthen the window");
        }
        return window;
    }

    private static int replicas(ConfigValues v) {
        int replicas = v.integer("cluster.replicas", 1, 5);
        if (replicas % 2 == 0) {
            throw new ConfigException("cluster.replicas=" + replicas + ": JetStream keeps 1, 3 or 5 copies (an odd"
                    + " number, so that a majority decides)");
        }
        return replicas;
    }
}

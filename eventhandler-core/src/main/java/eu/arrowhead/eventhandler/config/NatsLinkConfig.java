package eu.arrowhead.eventhandler.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How a node's link to NATS is secured: TLS (for {@code tls://} URLs) and the credentials the NATS servers
 * ask for. The keys are in the {@code Cluster mode} section of {@code config/eventhandler.properties}; docs/cluster.md
 * has a NATS configuration that asks for both.
 *
 * @param tls                whether the link is TLS: {@code cluster.nats-urls} are {@code tls://}
 * @param trustStore         the CAs the NATS servers' certificates are checked against (PKCS12); {@code null}: the
 *                           JVM's default CAs
 * @param trustStoreWhence   the key {@link #trustStore} comes from, or where the JVM's CAs are, for messages
 * @param keyStore           the node's certificate for mutual TLS (PKCS12); {@code null}: none is presented
 * @param keyStoreWhence     the key {@link #keyStore} comes from, for messages
 * @param credentials        what the node authenticates with
 * @param credentialValue    the user name, the token, the seed file or the .creds file (by {@code credentials})
 * @param password           the password of {@link Credentials#USER}
 */
public record NatsLinkConfig(
        boolean tls,
        Path trustStore,
        String trustStorePassword,
        String trustStoreWhence,
        Path keyStore,
        String keyStorePassword,
        String keyPassword,
        String keyStoreWhence,
        Credentials credentials,
        String credentialValue,
        String password) {

    /** What the node authenticates with, one kind at most, and the keys that set it. */
    public enum Credentials {
        NONE(""),
        USER("cluster.user and cluster.password"),
        TOKEN("cluster.token"),
        NKEY("cluster.nkey-seed-file"),
        CREDS_FILE("cluster.credentials-file");

        private final String keys;

        Credentials(String keys) {
            this.keys = keys;
        }

        /** The keys that set this kind, for messages. */
        public String keys() {
            return keys;
        }
    }

    static final List<String> KEYS = List.of("cluster.tls-trust-store", "cluster.tls-trust-store-password",
            "cluster.tls-key-store", "cluster.tls-key-store-password", "cluster.user", "cluster.password",
            "cluster.token", "cluster.nkey-seed-file", "cluster.credentials-file", "cluster.allow-plaintext");

    private static final List<String> TLS_KEYS = KEYS.subList(0, 4);

    /**
     * @param enabled {@code cluster.enabled}: without it the keys are only read (set, they stop the start:
     *                {@link IneffectiveSettings})
     * @param urls    {@code cluster.nats-urls}, already checked to be nats:// or tls://
     */
    static NatsLinkConfig from(ConfigValues v, boolean enabled, List<String> urls, SecurityConfig security) {
        if (!enabled) {
            KEYS.forEach(v::text);
            return new NatsLinkConfig(false, null, "", "", null, "", "", "", Credentials.NONE, "", "");
        }
        boolean tls = tls(urls);
        boolean allowPlaintext = v.bool("cluster.allow-plaintext");
        if (!tls) {
            for (String key : TLS_KEYS) {
                if (!v.text(key).isEmpty()) {
                    throw new ConfigException(key + " is set, but it cannot take effect: cluster.nats-urls are"
                            + " nats:// (plaintext); TLS to NATS takes tls:// URLs");
                }
            }
            if (security.sslEnabled() && !allowPlaintext) {
                throw new ConfigException("cluster.nats-urls=" + String.join(",", urls) + " is plaintext (nats://),"
                        + " but server.ssl.enabled=true: in secure mode the link to NATS is TLS, with tls:// URLs"
                        + " (docs/cluster.md, \"A secured link\"); set cluster.allow-plaintext=true only if the"
                        + " network between the nodes and the NATS servers is trusted");
            }
        }
        if (allowPlaintext && (tls || !security.sslEnabled())) {
            throw new ConfigException("cluster.allow-plaintext is set, but it cannot take effect: "
                    + (tls ? "cluster.nats-urls are tls://" : "server.ssl.enabled is false, where nats:// URLs are"
                    + " taken anyway"));
        }
        Path trustStore = file(v, "cluster.tls-trust-store");
        String trustStorePassword = v.text("cluster.tls-trust-store-password");
        String trustWhence = "cluster.tls-trust-store " + trustStore;
        if (trustStore == null && security.sslEnabled()) {
            trustStore = Path.of(security.trustStore());
            trustStorePassword = security.trustStorePassword();
            trustWhence = "server.ssl.trust-store " + trustStore;
        } else if (trustStore == null) {
            trustWhence = "the JVM's default CAs (cluster.tls-trust-store is empty)";
        }
        Path keyStore = file(v, "cluster.tls-key-store");
        String keyStorePassword = v.text("cluster.tls-key-store-password");
        String keyPassword = "";
        String keyWhence = "cluster.tls-key-store " + keyStore;
        if (keyStore == null && security.sslEnabled()) {
            keyStore = Path.of(security.keyStore());
            keyStorePassword = security.keyStorePassword();
            keyPassword = security.keyPassword();
            keyWhence = "server.ssl.key-store " + keyStore;
        } else if (keyStore == null) {
            keyWhence = "none (cluster.tls-key-store is empty)";
        }
        return credentials(v, tls, trustStore, trustStorePassword, trustWhence, keyStore, keyStorePassword, keyPassword,
                keyWhence);
    }

    private static NatsLinkConfig credentials(ConfigValues v, boolean tls, Path trustStore, String trustStorePassword,
                                              String trustWhence, Path keyStore, String keyStorePassword,
                                              String keyPassword, String keyWhence) {
        String user = v.text("cluster.user");
        String password = v.text("cluster.password");
        if (user.isEmpty() != password.isEmpty()) {
            throw new ConfigException((user.isEmpty() ? "cluster.password is set without cluster.user"
                    : "cluster.user is set without cluster.password") + ": a NATS user is a name and a password");
        }
        List<Credentials> kinds = new ArrayList<>();
        List<String> values = new ArrayList<>();
        add(kinds, values, Credentials.USER, user);
        add(kinds, values, Credentials.TOKEN, v.text("cluster.token"));
        Path seed = file(v, "cluster.nkey-seed-file");
        add(kinds, values, Credentials.NKEY, seed == null ? "" : seed.toString());
        Path creds = file(v, "cluster.credentials-file");
        add(kinds, values, Credentials.CREDS_FILE, creds == null ? "" : creds.toString());
        if (kinds.size() > 1) {
            throw new ConfigException("the node has more than one kind of NATS credentials: "
                    + kinds.stream().map(Credentials::keys).toList() + "; a NATS user authenticates with one of"
                    + " them, so set only the one the NATS servers' authorization names");
        }
        Credentials kind = kinds.isEmpty() ? Credentials.NONE : kinds.get(0);
        return new NatsLinkConfig(tls, tls ? trustStore : null, trustStorePassword, trustWhence,
                tls ? keyStore : null, keyStorePassword, keyPassword, keyWhence, kind,
                kinds.isEmpty() ? "" : values.get(0), password);
    }

    private static void add(List<Credentials> kinds, List<String> values, Credentials kind, String value) {
        if (!value.isEmpty()) {
            kinds.add(kind);
            values.add(value);
        }
    }

    /** All tls:// or all nats://: a mix would send the credentials in plaintext to some of the servers. */
    private static boolean tls(List<String> urls) {
        long secured = urls.stream().filter(url -> url.startsWith("tls://")).count();
        if (secured != 0 && secured != urls.size()) {
            throw new ConfigException("cluster.nats-urls=" + String.join(",", urls) + " mixes tls:// and nats://"
                    + " URLs: the link to every NATS server is either TLS or not; use tls:// for all of them");
        }
        return secured != 0;
    }

    /** A file the start needs: empty for none; one that cannot be read stops the start, naming the key. */
    private static Path file(ConfigValues v, String key) {
        String value = v.text(key);
        if (value.isEmpty()) {
            return null;
        }
        Path path = Path.of(value);
        if (!Files.isReadable(path) || Files.isDirectory(path)) {
            throw new ConfigException("configuration key '" + key + "' has the value '" + value + "'; that file does"
                    + " not exist or cannot be read");
        }
        return path;
    }

    /** Masks what must not reach a log or a message. */
    @Override
    public String toString() {
        return "NatsLinkConfig[tls=" + tls + ", trustStore=" + trustStoreWhence + ", keyStore=" + keyStoreWhence
                + ", credentials=" + credentials + "]";
    }
}

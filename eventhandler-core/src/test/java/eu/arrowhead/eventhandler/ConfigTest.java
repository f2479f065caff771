package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ClusterConfig;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigTest {
    private static final Path DOCUMENTED = Path.of("..", "config", "eventhandler.properties");

    @Test
    void defaultsAreTheDocumentedOnes() {
        EventHandlerConfig config = ConfigLoader.load(new String[0], Map.of());
        assertEquals(8455, config.serverPort());
        assertEquals(Duration.ofSeconds(120), config.timestampTolerance());
        assertEquals(Duration.ofMillis(1000), config.sseRetry());
        assertEquals(Runtime.getRuntime().availableProcessors(), config.selectorThreads(), "0 means one per core");
    }

    @Test
    void everyKeyIsDocumentedWithACommentAboveIt() throws Exception {
        List<String> lines = Files.readAllLines(DOCUMENTED, StandardCharsets.UTF_8);
        int keys = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!line.isBlank() && !line.startsWith("#")) {
                keys++;
                assertTrue(i > 0 && lines.get(i - 1).startsWith("#"), "no comment above: " + line);
            }
        }
        assertEquals(ConfigLoader.withOverrides(Map.of()).effective().size(), keys);
    }

    @Test
    void environmentOverridesTheFileAndArgumentsOverrideTheEnvironment(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("eh.properties");
        Files.writeString(file, "server.port=1000\nserver.worker-threads=3\nsse.heartbeat-seconds=7\n");
        EventHandlerConfig config = ConfigLoader.load(
                new String[] {"--config=" + file, "--server.port=3000"},
                Map.of("EH_SERVER_PORT", "2000", "EH_SERVER_WORKER_THREADS", "5", "PATH", "/usr/bin"));
        assertEquals(3000, config.serverPort());
        assertEquals(5, config.workerThreads());
        assertEquals(Duration.ofSeconds(7), config.heartbeat());
    }

    @Test
    void theConfigFileCanComeFromTheEnvironment(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("eh.properties");
        Files.writeString(file, "server.port=1234\n");
        assertEquals(1234, ConfigLoader.load(new String[0], Map.of("EH_CONFIG", file.toString())).serverPort());
    }

    @Test
    void unknownKeysAreRefusedWithTheirName(@TempDir Path dir) throws Exception {
        assertMessage(() -> ConfigLoader.load(new String[] {"--server.prot=1"}, Map.of()), "'server.prot'");
        assertMessage(() -> ConfigLoader.load(new String[0], Map.of("EH_SERVER_PROT", "1")), "EH_SERVER_PROT");
        Path file = dir.resolve("typo.properties");
        Files.writeString(file, "subscriber.queue-capacty=5\n");
        assertMessage(() -> ConfigLoader.load(new String[] {"--config=" + file}, Map.of()), "'subscriber.queue-capacty'");
        assertMessage(() -> ConfigLoader.load(new String[] {"--config=" + dir.resolve("missing")}, Map.of()), "does not exist");
        assertMessage(() -> ConfigLoader.load(new String[] {"server.port=1"}, Map.of()), "--key=value");
    }

    @Test
    void badValuesAreRefusedNamingKeyAndValue() {
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("server.port", "eighty")), "'server.port' has the value 'eighty'");
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("server.port", "70000")), "from 0 to 65535");
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("server.worker-threads", "0")), "'server.worker-threads'");
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("sse.heartbeat-seconds", "-1")), "'sse.heartbeat-seconds'");
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("sse.retry-millis", "0")), "'sse.retry-millis' has the value '0'");
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("server.host", "")), "'server.host'");
    }

    /** Each setting that is set but cannot take effect stops the start, naming the key and why. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "server.ssl.key-store=eh.p12                          | server.ssl.key-store is set, but it cannot take effect: server.ssl.enabled is false",
        "server.ssl.key-store-password=secret                 | server.ssl.key-store-password is set, but",
        "server.ssl.key-password=secret                       | server.ssl.key-password is set, but",
        "server.ssl.trust-store=trust.p12                     | server.ssl.trust-store is set, but",
        "server.ssl.trust-store-password=secret               | server.ssl.trust-store-password is set, but",
        "security.acl-file=acl.txt                            | security.acl-file is set, but it cannot take effect: server.ssl.enabled is false",
        "security.authorization.enabled=true                  | security.authorization.uri is an https URL, but server.ssl.enabled is false",
        "security.authorization.uri=http://ah:8445/authorization | security.authorization.uri is set, but it cannot take effect: security.authorization.enabled is false",
        "security.authorization.start-retries=9               | security.authorization.start-retries is set, but",
        "security.authorization.retry-seconds=9               | security.authorization.retry-seconds is set, but",
        "arrowhead.service-registry.enabled=true,arrowhead.service-registry.uri=https://sr:8443/serviceregistry"
                + " | arrowhead.service-registry.uri is an https URL, but server.ssl.enabled is false",
        "arrowhead.service-registry.uri=http://sr:8443/serviceregistry | arrowhead.service-registry.uri is set, but it cannot take effect: arrowhead.service-registry.enabled is false",
        "arrowhead.service-registry.retry-seconds=3           | arrowhead.service-registry.retry-seconds is set, but",
        "arrowhead.service-registry.timeout-seconds=3         | arrowhead.service-registry.timeout-seconds is set, but",
        "arrowhead.system-name=eh2                            | arrowhead.system-name is set, but",
        "arrowhead.system-address=10.0.0.2                    | arrowhead.system-address is set, but",
        "store.mode=off,store.url=jdbc:mysql://db:3306/eh     | store.url is set, but it cannot take effect: store.mode is off",
        "store.mode=off,store.password=secret                 | store.password is set, but",
        "store.mode=off,store.buffer-events=5                 | store.buffer-events is set, but",
        "store.mode=off,store.retention-events=5              | store.retention-events is set, but",
        "store.mode=off,store.query-max-events=5              | store.query-max-events is set, but",
        "store.retention-seconds=0,store.retention-events=0,store.retention-check-seconds=5"
                + " | store.retention-check-seconds is set, but it cannot take effect: store.retention-seconds and store.retention-events are both 0",
        "store.mode=off,push.max-retries=0,push.retry-initial-millis=50 | push.retry-initial-millis is set, but it cannot take effect: push.max-retries is 0",
        "store.mode=off,push.max-retries=0,push.retry-max-millis=50     | push.retry-max-millis is set, but",
        "store.mode=off,push.poison-retries=1                 | push.poison-retries is set, but it cannot take effect: store.mode is off",
        "store.mode=off,push.dead-letter-max=5                | push.dead-letter-max is set, but",
        "store.mode=off,push.pause-after-dead-letters=0       | push.pause-after-dead-letters is set, but",
        "push.dead-letter-max=0                               | push.dead-letter-max",
        "cluster.enabled=true,cluster.nats-urls=nats://127.0.0.1:4222,push.dead-letter-max=5"
                + " | push.pause-after-dead-letters=10 is more than push.dead-letter-max=5: in cluster mode",
        "push.retry-initial-millis=9000                       | push.retry-initial-millis (9000) is longer than push.retry-max-millis (5000)",
        "publish.max-request-bytes=1000                       | publish.max-payload-bytes (65536) is larger than publish.max-request-bytes (1000)",
    })
    void aSettingThatCannotTakeEffectStopsTheStart(String settings, String message) {
        Map<String, String> overrides = new HashMap<>();
        for (String setting : settings.split(",")) {
            overrides.put(setting.substring(0, setting.indexOf('=')).strip(), setting.substring(setting.indexOf('=') + 1).strip());
        }
        assertMessage(() -> ConfigLoader.withOverrides(overrides), message.strip());
    }

    @Test
    void settingsThatTakeEffectTogetherAreAccepted() {
        ConfigLoader.withOverrides(Map.of(
                "security.authorization.enabled", "true",
                "security.authorization.uri", "http://192.168.1.10:8445/authorization",
                "arrowhead.service-registry.enabled", "true",
                "arrowhead.service-registry.uri", "http://192.168.1.10:8443/serviceregistry",
                "arrowhead.system-address", "192.168.1.20",
                "store.mode", "sync", "store.sync-timeout-seconds", "3",
                "push.max-retries", "0"));
        ConfigLoader.withOverrides(Map.of("push.poison-retries", "0", "push.dead-letter-max", "1",
                "push.pause-after-dead-letters", "0"));
        ConfigLoader.withOverrides(Map.of("server.ssl.enabled", "true", "server.ssl.key-store", "eh.p12",
                "server.ssl.key-store-password", "secret", "security.acl-file", "acl.txt",
                "security.authorization.enabled", "true"));
        ConfigLoader.withOverrides(Map.of("store.mode", "off"));
        // With an event store the cursors retry with these pauses, whatever push.max-retries says.
        ConfigLoader.withOverrides(Map.of("push.max-retries", "0", "push.retry-max-millis", "60000"));
        // The packed default is not "set", whatever source repeats it.
        ConfigLoader.load(new String[] {"--server.ssl.key-store=config/certificates/eventhandler.p12"},
                Map.of("EH_SECURITY_ACL_FILE", " "));
    }

    @Test
    void settingsFromTheEnvironmentOrTheCommandLineAreCheckedToo(@TempDir Path dir) throws Exception {
        assertMessage(() -> ConfigLoader.load(new String[0], Map.of("EH_SERVER_SSL_KEY_STORE_PASSWORD", "123456")),
                "server.ssl.key-store-password is set, but it cannot take effect");
        assertMessage(() -> ConfigLoader.load(new String[] {"--security.acl-file=/etc/eventhandler/acl.txt"}, Map.of()),
                "security.acl-file is set, but it cannot take effect");
        Path file = dir.resolve("eh.properties");
        Files.writeString(file, "store.url=jdbc:mysql://db:3306/eh\n");
        assertMessage(() -> ConfigLoader.load(new String[] {"--config=" + file, "--store.mode=off"}, Map.of()),
                "store.url is set, but it cannot take effect: store.mode is off");
    }

    /** JetStream would refuse the stream at start, in its own words: refused here, in the keys to change. */
    @Test
    void aDuplicateWindowLongerThanTheClustersRetentionIsRefused() {
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                        "nats://127.0.0.1:4222", "cluster.retention-seconds", "60", "cluster.duplicate-window-seconds",
                        "120")),
                "cluster.duplicate-window-seconds=120 is longer than cluster.retention-seconds=60");
        ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls", "nats://127.0.0.1:4222",
                "cluster.retention-seconds", "0", "cluster.duplicate-window-seconds", "120"));
    }

    @Test
    void aNatsUrlWithCredentialsInItIsRefused() {
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                        "nats://eventhandler:secret@127.0.0.1:4222")),
                "cluster.nats-urls: a URL with a user or token in it would be logged");
    }

    /** A keyed event is sent again while the stream elects a leader: the window must outlast those repeats. */
    @Test
    void aDuplicateWindowShorterThanTheRepeatsOfAPublishIsRefused() {
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                        "nats://127.0.0.1:4222", "cluster.timeout-seconds", "5", "cluster.duplicate-window-seconds",
                        "9")),
                "cluster.duplicate-window-seconds=9 is shorter than twice cluster.timeout-seconds=5");
    }

    /**
     * A node sends a publish's events together, each awaiting its acknowledgement: the bound holds the largest
     * batch, derives from the heap when 0, and cannot be set beyond what the heap holds.
     */
    @Test
    void theAcknowledgementsANodeAwaitsAreBoundWithinTheHeap() {
        EventHandlerConfig derived = ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                "nats://127.0.0.1:4222"));
        long share = Math.min(ClusterConfig.MOST_PENDING_ACKS,
                derived.heap().storeBuffer() / ClusterConfig.PENDING_ACK_BYTES);
        assertEquals(share, derived.cluster().maxPendingAcks());
        assertTrue(derived.describeHeap().contains("cluster.max-pending-acks " + share), derived.describeHeap());
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                        "nats://127.0.0.1:4222", "cluster.max-pending-acks", "999")),
                "configuration key 'cluster.max-pending-acks' is 999, less than publish.max-batch-events (1000)");
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                        "nats://127.0.0.1:4222", "cluster.max-pending-acks", Long.toString(share + 1))),
                "configuration key 'cluster.max-pending-acks'");
        assertEquals(10, ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                "nats://127.0.0.1:4222", "cluster.max-pending-acks", "10", "publish.max-batch-events", "10"))
                .cluster().maxPendingAcks());
    }

    /** A cluster's cursors set dead letters aside and pause as a single node's do. */
    @Test
    void aClusterTakesTheDeadLetterSettings() {
        EventHandlerConfig config = ConfigLoader.withOverrides(Map.of("cluster.enabled", "true", "cluster.nats-urls",
                "nats://127.0.0.1:4222", "push.poison-retries", "1", "push.dead-letter-max", "5",
                "push.pause-after-dead-letters", "3"));
        assertEquals(1, config.push().poisonRetries());
        assertEquals(5, config.push().deadLetterMax());
        assertEquals(3, config.push().pauseAfterDeadLetters());
    }

    @Test
    void theLoggedConfigurationListsEveryKey() {
        String described = ConfigLoader.withOverrides(Map.of("server.port", "9")).describe();
        assertTrue(described.contains("server.port=9"), described);
        assertTrue(described.contains("subscriber.max-count=0"), described);
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable load, String expected) {
        ConfigException e = assertThrows(ConfigException.class, load);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}

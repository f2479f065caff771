package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {
    private static final Path DOCUMENTED = Path.of("..", "config", "eventhandler.properties");

    @Test
    void defaultsAreTheDocumentedOnes() {
        EventHandlerConfig config = ConfigLoader.load(new String[0], Map.of());
        assertEquals(8455, config.serverPort());
        assertEquals(Duration.ofSeconds(120), config.timestampTolerance());
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
        assertMessage(() -> ConfigLoader.withOverrides(Map.of("server.host", "")), "'server.host'");
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

package eu.arrowhead.eventhandler.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The migration's configuration: a single node's store.* keys beside the cluster's cluster.* keys. */
class MigrationConfigTest {

    @Test
    void storeAndClusterKeysAreReadTogether() {
        String[] args = {"--store.url=jdbc:h2:file:/tmp/eh", "--cluster.nats-urls=nats://127.0.0.1:4222",
                "--cluster.stream=MOVED"};
        assertThrows(ConfigException.class, () -> ConfigLoader.load(args, Map.of()), "a server start refuses them");
        EventHandlerConfig config = ConfigLoader.loadForMigration(args, Map.of());
        assertEquals("jdbc:h2:file:/tmp/eh", config.storeUrl());
        assertEquals("MOVED", config.cluster().stream());
    }

    @Test
    void aBadValueOrNoLogIsRefusedNamingTheKey() {
        ConfigException bad = assertThrows(ConfigException.class, () -> ConfigLoader.loadForMigration(
                new String[] {"--cluster.nats-urls=http://x"}, Map.of()));
        assertTrue(bad.getMessage().startsWith("cluster.nats-urls"), bad.getMessage());
        ConfigException off = assertThrows(ConfigException.class, () -> ConfigLoader.loadForMigration(
                new String[] {"--store.mode=off"}, Map.of()));
        assertTrue(off.getMessage().startsWith("store.mode is off"), off.getMessage());
    }
}

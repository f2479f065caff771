package eu.arrowhead.eventhandler;

import eu.arrowhead.eventhandler.cluster.LogMigration;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.store.LogExport;
import java.io.IOException;
import java.sql.SQLException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command that moves a stopped single node's log into a cluster's stream, the events with their ids
 * ({@link LogMigration}): {@code scripts/eventhandler --migrate-to-cluster [--config=FILE] [--key=value ...]}, with
 * the single node's {@code store.*} keys and the cluster's {@code cluster.*} keys. Run again, it resumes.
 *
 * <p>Exit codes: 0 when the stream holds the whole log, 1 if the migration stopped (run it again to resume) or was
 * refused, 2 for a configuration error.
 */
public final class MigrateToCluster {
    private static final Logger LOG = LoggerFactory.getLogger(MigrateToCluster.class);

    private MigrateToCluster() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.getenv()));
    }

    /** @return the exit code */
    static int run(String[] args, Map<String, String> env) {
        EventHandlerConfig config;
        try {
            config = ConfigLoader.loadForMigration(args, env);
        } catch (ConfigException e) {
            LOG.error("not migrated: {}", e.getMessage());
            return 2;
        }
        try (LogExport log = LogExport.open(config)) {
            LogMigration.run(config.cluster(), log, config.storeReplayPageEvents());
            return 0;
        } catch (ConfigException e) {
            // a key store or seed file that cannot be used shows only when the link is made
            LOG.error("not migrated: {}", e.getMessage());
            return 2;
        } catch (SQLException | IOException | RuntimeException e) {
            LOG.error("migration stopped: {}", e.getMessage() == null ? e.toString() : e.getMessage());
            return 1;
        }
    }
}

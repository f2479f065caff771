package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.config.ClusterConfig;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.PurgeOptions;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure the stream exists as configured: creates it (with {@code cluster.replicas} and, for a migrated log,
 * starting at {@code cluster.first-id}) when it is missing, and applies the retention and duplicate window at
 * every start. Every node does this at start; creating a stream that another node has just created with the same
 * configuration is a no-op for JetStream.
 */
final class StreamSetup {
    private static final Logger LOG = LoggerFactory.getLogger(StreamSetup.class);
    /** JetStream's error code for a stream that does not exist. */
    private static final int STREAM_NOT_FOUND = 10059;

    private StreamSetup() {
    }

    /**
     * @return the stream as it is now
     * @throws IOException if it cannot be created or read ({@link SetupRefused} if it is not the Event Handler's)
     */
    static StreamInfo ensure(JetStreamManagement management, ClusterConfig config, StreamMessages messages)
            throws IOException {
        try {
            StreamInfo info;
            try {
                info = management.getStreamInfo(config.stream());
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != STREAM_NOT_FOUND) {
                    throw e;
                }
                return create(management, config, messages);
            }
            return update(management, info, config, messages);
        } catch (JetStreamApiException e) {
            throw new IOException("the cluster's stream " + config.stream() + " cannot be set up: " + e.getMessage()
                    + (e.getApiErrorCode() == 10074 ? " (cluster.replicas is more than the NATS servers with"
                    + " JetStream)" : ""), e);
        }
    }

    private static StreamInfo create(JetStreamManagement management, ClusterConfig config, StreamMessages messages)
            throws IOException, JetStreamApiException {
        StreamConfiguration wanted = StreamConfiguration.builder()
                .name(config.stream())
                .subjects(messages.allSubjects())
                .storageType(StorageType.File)
                .replicas(config.replicas())
                .discardPolicy(DiscardPolicy.Old)
                .maxAge(config.maxAge())
                .maxMessages(config.maxEvents() == 0 ? -1 : config.maxEvents())
                .duplicateWindow(config.duplicateWindow())
                .build();
        StreamInfo info = management.addStream(wanted);
        if (config.firstId() > 1 && info.getStreamState().getLastSequence() == 0) {
            // A purge up to a sequence past the end moves the stream's next sequence there.
            management.purgeStream(config.stream(), PurgeOptions.builder().sequence(config.firstId()).build());
            info = management.getStreamInfo(config.stream());
        }
        LOG.info("created the cluster's stream {} (subjects {}, {} replicas), its next id {}", config.stream(),
                messages.allSubjects(), config.replicas(), info.getStreamState().getLastSequence() + 1);
        return info;
    }

    private static StreamInfo update(JetStreamManagement management, StreamInfo info, ClusterConfig config,
                                     StreamMessages messages) throws IOException, JetStreamApiException {
        StreamConfiguration have = info.getConfiguration();
        if (!have.getSubjects().equals(List.of(messages.allSubjects()))) {
            throw new SetupRefused("the stream " + config.stream() + " exists with the subjects " + have.getSubjects()
                    + ", not " + messages.allSubjects() + ": it is not this cluster's (set cluster.stream or"
                    + " cluster.subject-prefix to match it, or name a new stream)");
        }
        if (have.getReplicas() != config.replicas()) {
            LOG.warn("the stream {} has {} replicas, not cluster.replicas={}: the stream decides", config.stream(),
                    have.getReplicas(), config.replicas());
        }
        long maxEvents = config.maxEvents() == 0 ? -1 : config.maxEvents();
        Duration maxAge = config.maxAge();
        // A direct get may be answered by a follower that lags the leader: a node's feed that asks for the last
        // event of its type (FeedWatch) could take an older one for the last and skip past a newer one.
        if (!have.getMaxAge().equals(maxAge) || have.getMaxMsgs() != maxEvents
                || !have.getDuplicateWindow().equals(config.duplicateWindow()) || have.getAllowDirect()) {
            info = management.updateStream(StreamConfiguration.builder(have).maxAge(maxAge).maxMessages(maxEvents)
                    .duplicateWindow(config.duplicateWindow()).allowDirect(false).build());
            LOG.info("applied cluster.retention-* and cluster.duplicate-window-seconds to the stream {}{}",
                    config.stream(), have.getAllowDirect() ? ", and turned its direct gets off (a lagging replica"
                            + " may answer them)" : "");
        }
        return info;
    }
}

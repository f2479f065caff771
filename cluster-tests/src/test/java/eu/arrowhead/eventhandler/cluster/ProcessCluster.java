package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cluster as users run one: clustered nats-server processes (the stream with 3 replicas) and Event Handler nodes
 * as processes of their own, started from the server's jar, each of which a test may kill with SIGKILL.
 */
final class ProcessCluster implements AutoCloseable {
    static final String STREAM = "EVENTHANDLER";
    private static final Logger LOG = LoggerFactory.getLogger(ProcessCluster.class);

    private final Path directory;
    private final NatsCluster nats;
    private final String[] settings;
    private final ServerProcess[] nodes;
    private final URI[] uris;

    private ProcessCluster(Path directory, NatsCluster nats, int nodeCount, String[] settings) {
        this.directory = directory;
        this.nats = nats;
        this.settings = settings;
        this.nodes = new ServerProcess[nodeCount];
        this.uris = new URI[nodeCount];
    }

    /** Three NATS servers and {@code nodeCount} Event Handler nodes, every one of them listening. */
    static ProcessCluster start(Path directory, int nodeCount, String... settings) throws Exception {
        NatsCluster nats = NatsCluster.start(Files.createDirectories(directory.resolve("nats")), 3);
        ProcessCluster cluster = new ProcessCluster(directory, nats, nodeCount, settings);
        boolean started = false;
        try {
            for (int i = 0; i < nodeCount; i++) {
                // A port kept for the node's life: a node started again listens where its clients know it.
                cluster.startNode(i, TestServer.portNoConnectionTakes());
            }
            for (int i = 0; i < nodeCount; i++) {
                cluster.uris[i] = cluster.nodes[i].awaitListening();
            }
            started = true;
            return cluster;
        } finally {
            if (!started) {
                cluster.close();
            }
        }
    }

    private void startNode(int i, int port) throws IOException {
        List<String> args = new ArrayList<>(List.of("--server.host=127.0.0.1", "--server.port=" + port,
                "--cluster.enabled=true", "--cluster.nats-urls=" + nats.urls(), "--cluster.replicas=3",
                "--cluster.node-name=node-" + i));
        args.addAll(List.of(settings));
        nodes[i] = ServerProcess.start(Files.createDirectories(directory.resolve("node-" + i)),
                args.toArray(String[]::new));
    }

    /** SIGKILL of node {@code i}, then the node started again at once on its port; returns once it listens. */
    void killAndRestart(int i) throws Exception {
        nodes[i].kill();
        startNode(i, uris[i].getPort());
        nodes[i].awaitListening();
    }

    NatsCluster nats() {
        return nats;
    }

    ServerProcess node(int i) {
        return nodes[i];
    }

    /** Every node's URI, starting with node {@code first}: a client given this list starts on that node. */
    List<URI> urisFrom(int first) {
        List<URI> list = new ArrayList<>();
        for (int i = 0; i < uris.length; i++) {
            list.add(uris[(first + i) % uris.length]);
        }
        return list;
    }

    /** The index of the NATS server that leads the stream now (servers are named {@code n0}, {@code n1}, ...). */
    int streamLeader() throws IOException, InterruptedException {
        try (Connection connection = Nats.connect(nats.urls())) {
            String leader = connection.jetStreamManagement().getStreamInfo(STREAM).getClusterInfo().getLeader();
            return Integer.parseInt(leader.substring(1));
        } catch (JetStreamApiException e) {
            throw new IOException("cannot ask JetStream which server leads the stream: " + e.getMessage(), e);
        }
    }

    /**
     * The index of the server that leads the stream, asked of every server but {@code cutOff} (which may be
     * frozen); -1 while they know of none.
     */
    int streamLeaderAskingAllBut(int cutOff) {
        try (Connection connection = connectToAllBut(cutOff)) {
            String leader = connection.jetStreamManagement(JetStreamOptions.builder()
                    .requestTimeout(Duration.ofSeconds(1)).build()).getStreamInfo(STREAM).getClusterInfo().getLeader();
            return leader == null ? -1 : Integer.parseInt(leader.substring(1));
        } catch (IOException | JetStreamApiException e) {
            return -1; // no leader to answer now
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The name of the stream's push cursor, where the cluster has one push subscription. */
    String pushCursor() throws IOException, InterruptedException, JetStreamApiException {
        try (Connection connection = Nats.connect(nats.urls())) {
            return connection.jetStreamManagement().getConsumerNames(STREAM).stream()
                    .filter(name -> name.startsWith("eventhandler-push-")).findFirst().orElseThrow();
        }
    }

    /** A connection to every NATS server but {@code cutOff} (which may be frozen or dead). */
    Connection connectToAllBut(int cutOff) throws IOException, InterruptedException {
        String others = String.join(",", java.util.stream.IntStream.range(0, 3).filter(i -> i != cutOff)
                .mapToObj(nats::url).toList());
        return Nats.connect(Options.builder().server(others).connectionTimeout(Duration.ofSeconds(2)).build());
    }

    /**
     * The index of the NATS server that leads the durable consumer {@code consumer} of the stream, once it has a
     * leader: right after a server rejoined, JetStream may describe the consumer with none for a moment.
     */
    int consumerLeader(String consumer) throws IOException, InterruptedException {
        String[] leader = new String[1];
        try (Connection connection = Nats.connect(nats.urls())) {
            JetStreamManagement management = connection.jetStreamManagement();
            Await.until(consumer + " to have a leader", Duration.ofSeconds(60), () -> {
                try {
                    leader[0] = management.getConsumerInfo(STREAM, consumer).getClusterInfo().getLeader();
                } catch (IOException | JetStreamApiException e) {
                    return false; // not answered now: asked again
                }
                return leader[0] != null && !leader[0].isEmpty();
            });
            return Integer.parseInt(leader[0].substring(1));
        }
    }

    private static final Pattern META_LEADER = Pattern.compile(
            "(\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d+) \\[INF\\] (?:JetStream cluster new metadata leader:"
                    + " n(\\d+)/|(Self is new JetStream cluster metadata leader))");

    /**
     * The index of the NATS server that leads JetStream's metadata (the meta leader) now, as the servers logged
     * their last election: JetStream's API does not say, and nats-server 2.9 tells only its monitoring port.
     * Ask only while every server runs and the election is over.
     */
    int metaLeader() {
        String latestAt = "";
        int leader = -1;
        for (int i = 0; i < 3; i++) {
            Matcher found = META_LEADER.matcher(nats.log(i));
            while (found.find()) {
                if (found.group(1).compareTo(latestAt) >= 0) {
                    latestAt = found.group(1);
                    leader = found.group(3) != null ? i : Integer.parseInt(found.group(2));
                }
            }
        }
        if (leader < 0) {
            throw new IllegalStateException("no NATS server logged a meta leader");
        }
        return leader;
    }

    /**
     * What each node logged of cluster mode at INFO and above, with its time: its link to NATS, its feed's
     * restarts, its outages. For a failed assertion's message.
     */
    String clusterLog() {
        StringBuilder log = new StringBuilder();
        for (int i = 0; i < nodes.length; i++) {
            if (nodes[i] == null) {
                continue;
            }
            for (String line : nodes[i].output().split("\n")) {
                if (CLUSTER_LINE.matcher(line).find()) {
                    log.append("node ").append(i).append(": ").append(line).append('\n');
                }
            }
        }
        return log.toString();
    }

    private static final Pattern CLUSTER_LINE = Pattern.compile(" (INFO|WARN|ERROR) +\\[[^]]*] \\S*\\.cluster\\.");

    /**
     * The ids of {@code ids} that the stream does not hold, each with the stream's last answer for it. The ids the
     * stream does not give at once are asked for again for {@link #STREAM_SETTLES}: after a fault a new stream
     * leader may answer with an error, or may not yet have applied an event its quorum stored, for a moment.
     */
    List<String> notInStream(List<Long> ids) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + STREAM_SETTLES.toNanos();
        try (Connection connection = Nats.connect(nats.urls())) {
            JetStreamManagement management = connection.jetStreamManagement();
            Map<Long, String> missing = notGiven(management, ids);
            while (!missing.isEmpty() && System.nanoTime() - deadline < 0) {
                LOG.warn("the stream did not give {} of the acknowledged events, such as {}; asking again",
                        missing.size(), missing.entrySet().iterator().next());
                // Poll interval only: the stream's answers, not the passing of time, decide.
                LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                missing = notGiven(management, List.copyOf(missing.keySet()));
            }
            return missing.entrySet().stream().map(entry -> entry.getKey() + " (" + entry.getValue() + ")").toList();
        }
    }

    /**
     * How long the stream may answer "temporarily unavailable" (10008) after a fault: a server woken from a freeze
     * left it so for over 10 s once (ClusterPartitionIT, a new user's run on a slow machine).
     */
    private static final Duration STREAM_SETTLES = Duration.ofSeconds(30);

    /** The ids of {@code ids} the stream does not give now, in order, each with why. */
    private static Map<Long, String> notGiven(JetStreamManagement management, List<Long> ids) {
        Map<Long, String> missing = new LinkedHashMap<>();
        for (long id : ids) {
            try {
                management.getMessage(STREAM, id);
            } catch (JetStreamApiException e) {
                missing.put(id, "JetStream error " + e.getApiErrorCode() + ": " + e.getErrorDescription());
            } catch (IOException e) {
                missing.put(id, e.toString());
            }
        }
        return missing;
    }

    @Override
    public void close() throws Exception {
        for (ServerProcess node : nodes) {
            if (node != null) {
                node.close();
            }
        }
        nats.close();
    }
}

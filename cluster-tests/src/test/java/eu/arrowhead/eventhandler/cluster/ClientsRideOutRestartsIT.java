package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.publisher.EventPublisher;
import eu.arrowhead.eventhandler.publisher.PublishException;
import eu.arrowhead.eventhandler.subscriber.EventSubscriber;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.io.TempDirFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 28's run, as an application embeds the two client libraries: one thread publishes 30 000 events one after
 * another with an {@link EventPublisher} on its defaults, an {@link EventSubscriber} on its defaults receives them,
 * and the server (the jar, a process of its own) is killed with {@code kill -9} four times along the way and
 * started again at once on the same port and database.
 *
 * <p>In {@code store.mode=sync} nothing may reach the application: no failed publish, no event stored twice (a
 * publish whose answer the kill lost is retried with its {@code Idempotency-Key}, which the log kept with the
 * event), every event received once and in order. In {@code store.mode=async} (5 000 publishes) the same, except
 * that a crash may lose what the writer had not yet written: every acknowledged event the subscriber did not get
 * must lie in a replay gap it was told of, and an event it got live before the crash may come again under a new
 * id when the crash also cut its publish's answer. The same again with three cluster nodes (5 000 publishes).
 */
class ClientsRideOutRestartsIT {
    private static final Logger LOG = LoggerFactory.getLogger(ClientsRideOutRestartsIT.class);
    private static final String TYPE = "restart.counter";
    private static final int EVENTS = 30_000;
    /**
     * Async mode and the cluster: the same four kills under fewer publishes, to keep the suite within its time
     * (the 30 000 of sync mode took 72 s here, the cluster's 52 s). A kill every 1 000 acknowledged publishes still
     * falls on a publish in flight, with a writer's buffer and a subscriber under way; what sync mode needs its
     * 30 000 for, a node that lived through H2's compactions (every 10 s) before each kill, is not asked of async
     * mode (a crash may take its unwritten tail anyway, announced as a gap) nor of the cluster (no H2).
     */
    private static final int SHORTER_RUN_EVENTS = 5_000;
    private static final int KILLS = 4;
    private static final Duration WAIT = Duration.ofSeconds(120);

    /**
     * The servers' files (H2's, JetStream's) in memory where the machine has room there: a sync publish waits for a
     * commit forced to disk, and the 30 000 of the sync run wait one after another (2 000 sequential sync publishes
     * here, under load: 27-28 s on the disk, 14-24 s in memory). A {@code kill -9} ends the process, not the
     * machine: the file it leaves holds what the process had written, from a disk's page cache or from memory
     * alike, so the store is asked the same either way.
     */
    @TempDir(factory = InMemoryWhereRoom.class)
    Path directory;

    @ParameterizedTest
    @ValueSource(strings = {"sync", "async"})
    void fourKillsOfTheServerUnderLoadReachNeitherThePublisherNorTheSubscriber(String storeMode) throws Exception {
        boolean sync = storeMode.equals("sync");
        try (SingleNode node = new SingleNode(directory, "--store.mode=" + storeMode)) {
            run(storeMode, sync ? EVENTS : SHORTER_RUN_EVENTS, node.uris(), kill -> node.killAndRestart(), sync);
        }
    }

    /** The same with a cluster of three nodes: the kills take each node in turn; nothing may be lost. */
    @Test
    void fourKillsOfClusterNodesUnderLoadReachNeitherThePublisherNorTheSubscriber() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(directory, 3)) {
            run("cluster", SHORTER_RUN_EVENTS, cluster.urisFrom(0), kill -> cluster.killAndRestart(kill % 3), true);
        }
    }

    /** A directory under {@code /dev/shm} if it has {@value #MIN_FREE_BYTES} bytes free, else the default one. */
    static final class InMemoryWhereRoom implements TempDirFactory {
        private static final long MIN_FREE_BYTES = 1L << 30;

        @Override
        public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext extension)
                throws IOException {
            Path memory = Path.of("/dev/shm");
            if (Files.isDirectory(memory) && Files.isWritable(memory)
                    && Files.getFileStore(memory).getUsableSpace() >= MIN_FREE_BYTES) {
                return Files.createTempDirectory(memory, "junit-");
            }
            return Files.createTempDirectory("junit-");
        }
    }

    private interface Kill {
        /** Kills a server with SIGKILL and starts it again; returns once it listens. */
        void killAndRestart(int kill) throws Exception;
    }

    private void run(String name, int events, List<URI> nodes, Kill kills, boolean nothingLost) throws Exception {
        ReceivedIds received = new ReceivedIds();
        try (CountingPublisher publisher = new CountingPublisher(nodes, events);
             EventSubscriber subscriber = EventSubscriber.builder(nodes).eventTypes(TYPE)
                     .listener(received).subscriptionListener(received).subscribe()) {
            Await.until("the subscriber to be connected", WAIT, () -> received.connections() > 0);
            publisher.start();
            for (int kill = 0; kill < KILLS; kill++) {
                int reached = (kill + 1) * events / (KILLS + 1);
                Await.until(reached + " events acknowledged", WAIT, () -> publisher.acknowledgedCount() >= reached);
                kills.killAndRestart(kill);
            }
            // The publisher's last sixth: a sync commit per event on a loaded CI machine, with room to spare.
            publisher.awaitDone(WAIT.multipliedBy(2));

            assertEquals(List.of(), publisher.failures(), "publishes that failed in the application");
            List<Long> acknowledged = publisher.acknowledged();
            assertEquals(events, acknowledged.size());
            try {
                Await.until("every acknowledged event received or announced as lost", WAIT,
                        () -> unannounced(received.missing(acknowledged), received).isEmpty());
            } catch (AssertionError timedOut) {
                // The assertion below names them.
            }
            assertEquals(List.of(), unannounced(received.missing(acknowledged), received),
                    "acknowledged events neither received nor announced as lost");

            assertEquals(0, received.duplicates(), "events received twice under one id");
            assertTrue(received.increasing(), "events out of order");
            List<String> payloads = received.payloads();
            Map<String, Long> receivedTwice = payloads.stream().collect(Collectors.groupingBy(p -> p,
                    Collectors.counting()));
            receivedTwice.values().removeIf(count -> count == 1);
            List<Long> lost = received.missing(acknowledged);
            LOG.warn("{}: {} events acknowledged, {} received over {} connections; {} acknowledged lost in {} replay"
                    + " gaps {}; payloads received under two ids {}", name, acknowledged.size(),
                    received.ids().size(), received.connections(), lost.size(), received.gaps(),
                    received.gapNotices(), receivedTwice);
            if (nothingLost) {
                assertEquals(Map.of(), receivedTwice, "events stored twice (the same payload under two ids)");
                assertEquals(List.of(), lost, "acknowledged events lost");
                assertEquals(0, received.gaps(), "replay gaps");
                assertEquals(events, payloads.size());
            } else {
                // Async mode delivers an event before it is written: one delivered live whose write and answer the
                // kill both took is published again by the publisher's retry (its key went with the unwritten
                // event), so the subscriber has it under its lost id and its new one. At most the publish in
                // flight at each kill, and never three times.
                assertTrue(receivedTwice.size() <= KILLS && receivedTwice.values().stream().allMatch(n -> n == 2),
                        "payloads received under two ids beyond one per kill: " + receivedTwice);
            }
        }
    }

    private static List<Long> unannounced(List<Long> ids, ReceivedIds received) {
        return ids.stream().filter(id -> !announced(id, received)).toList();
    }

    private static boolean announced(long id, ReceivedIds received) {
        for (ReplayGap gap : received.gapNotices()) {
            if (gap.requestedAfterId() < id && id <= gap.resumedAfterId()) {
                return true;
            }
        }
        return false;
    }

    /** The server's jar as a process on a port of its own, started again on that port and database after a kill. */
    private static final class SingleNode implements AutoCloseable {
        private final Path directory;
        private final String[] settings;
        private final URI base;
        private ServerProcess process;

        SingleNode(Path directory, String... settings) throws InterruptedException {
            int port = TestServer.portNoConnectionTakes();
            this.directory = directory;
            this.settings = Stream.concat(Stream.of("--server.host=127.0.0.1", "--server.port=" + port),
                    Stream.of(settings)).toArray(String[]::new);
            this.base = URI.create("http://127.0.0.1:" + port);
            this.process = ServerProcess.start(directory, this.settings);
            process.awaitListening();
        }

        List<URI> uris() {
            return List.of(base);
        }

        void killAndRestart() throws InterruptedException {
            process.kill();
            process = ServerProcess.start(directory, settings);
            process.awaitListening();
        }

        @Override
        public void close() throws InterruptedException {
            process.terminate();
            if (!process.process().waitFor(60, TimeUnit.SECONDS)) {
                process.kill();
            }
        }
    }

    /** One application thread publishing the counter 0 to {@code events} - 1 with the library's defaults. */
    private static final class CountingPublisher implements AutoCloseable {
        private final int events;
        private final EventPublisher publisher;
        private final List<Long> acknowledged = Collections.synchronizedList(new ArrayList<>());
        private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        private final Thread thread;

        CountingPublisher(List<URI> nodes, int events) {
            this.events = events;
            this.publisher = EventPublisher.builder(nodes).build();
            this.thread = new Thread(this::publishAll, "counting-publisher");
        }

        private void publishAll() {
            for (int i = 0; i < events; i++) {
                try {
                    acknowledged.add(publisher.publish(EventPublishRequest.of(TYPE, Integer.toString(i))));
                } catch (PublishException e) {
                    failures.add(i + ": " + e.getMessage());
                }
            }
        }

        void start() {
            thread.start();
        }

        int acknowledgedCount() {
            return acknowledged.size();
        }

        void awaitDone(Duration timeout) throws InterruptedException {
            thread.join(timeout.toMillis());
            if (thread.isAlive()) {
                throw new AssertionError("the publisher did not finish within " + timeout + "; "
                        + acknowledgedCount() + " acknowledged");
            }
        }

        List<Long> acknowledged() {
            synchronized (acknowledged) {
                return List.copyOf(acknowledged);
            }
        }

        List<String> failures() {
            synchronized (failures) {
                return List.copyOf(failures);
            }
        }

        @Override
        public void close() {
            publisher.close();
        }
    }
}

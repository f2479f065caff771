package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A start that fails at any step stops what had started: no thread of the server's is left running and its port is
 * free. Each part is failed in turn right after it started, as the next step's failure would be (Jersey's container
 * failing after the push sender started, say), in a single node with every part (the event store, the Authorization
 * system, the Service Registry) and in a node of a cluster; and a few steps fail for real: the port taken, a bad key
 * store, a database that cannot be opened, no NATS server.
 */
class FailedStartTest {
    /** The stops have no waits of their own but the push sender's (at most 2 s) and the registry's (1 s here). */
    private static final Duration THREADS_END = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    private Set<Thread> before;
    private int port;

    @BeforeEach
    void noteThreads() {
        before = Thread.getAllStackTraces().keySet();
        port = TestServer.freePort();
    }

    @Test
    void aFailureAfterAnyPartOfASingleNodeStopsWhatStarted() throws Exception {
        Map<String, String> settings = settings("store.mode", "async",
                "store.url", "jdbc:h2:file:" + dir.resolve("log"),
                "store.id-mark-file", dir.resolve("log.ids").toString(),
                "security.authorization.enabled", "true",
                "security.authorization.uri", "http://127.0.0.1:" + TestServer.freePort() + "/authorization",
                "security.authorization.start-retries", "0", "security.authorization.retry-seconds", "1",
                "arrowhead.service-registry.enabled", "true",
                "arrowhead.service-registry.uri", "http://127.0.0.1:" + TestServer.freePort() + "/serviceregistry",
                "arrowhead.service-registry.retry-seconds", "1", "arrowhead.service-registry.timeout-seconds", "1");
        List<String> parts = startAndStop(settings);
        assertEquals(List.of("event log", "Authorization system client", "authorization updates from other nodes",
                "event store retention", "event store readers", "push sender", "writers", "supervisor", "HTTP server",
                "workers", "open streams and requests", "Service Registry registration"), parts);
        failAfterEach(parts, settings);
    }

    @Test
    void aFailureAfterAnyPartOfAClusterNodeStopsWhatStarted() throws Exception {
        try (NatsCluster nats = NatsCluster.start(dir, 1)) {
            Map<String, String> settings = settings("cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                    "cluster.node-name", "failing");
            List<String> parts = startAndStop(settings);
            assertEquals("event log", parts.get(0));
            assertTrue(parts.contains("push sender") && parts.contains("HTTP server"), parts.toString());
            failAfterEach(parts, settings);
        }
    }

    @Test
    void aPortInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(port, 50, InetAddress.getLoopbackAddress())) {
            IOException refused = assertThrows(IOException.class, () -> start(settings("store.mode", "async",
                    "store.url", "jdbc:h2:file:" + dir.resolve("log"),
                    "store.id-mark-file", dir.resolve("log.ids").toString())));
            assertTrue(refused.getMessage().startsWith("cannot listen on 127.0.0.1:" + port), refused.getMessage());
            awaitNothingRunning("the port in use");
        }
        awaitPortFree();
    }

    @Test
    void aBadKeyStore() throws Exception {
        String[] secure = TestPki.get().serverSettings("server.ssl.key-store-password", "wrong");
        assertThrows(ConfigException.class, () -> start(settings(secure)));
        awaitNothingRunning("the bad key store");
        awaitPortFree();
    }

    @Test
    void aDatabaseThatCannotBeOpened() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "a file where the log's directory should be");
        IOException refused = assertThrows(IOException.class, () -> start(settings("store.mode", "async",
                "store.url", "jdbc:h2:file:" + notADirectory.resolve("log"),
                "store.id-mark-file", dir.resolve("log.ids").toString())));
        assertTrue(refused.getMessage().contains("cannot be opened"), refused.getMessage());
        awaitNothingRunning("the database that cannot be opened");
        awaitPortFree();
    }

    @Test
    void noNatsServer() throws Exception {
        IOException refused = assertThrows(IOException.class, () -> start(settings("cluster.enabled", "true",
                "cluster.nats-urls", "nats://127.0.0.1:" + TestServer.freePort(), "cluster.node-name", "failing",
                "cluster.timeout-seconds", "1")));
        assertTrue(refused.getMessage().startsWith("no NATS server"), refused.getMessage());
        awaitNothingRunning("no NATS server");
        awaitPortFree();
    }

    /** Starts a server with every part and stops it: its parts, in the order they started. */
    private List<String> startAndStop(Map<String, String> settings) throws Exception {
        List<String> parts = new ArrayList<>();
        EventHandlerServer.start(ConfigLoader.withOverrides(settings), parts::add).close();
        awaitNothingRunning("a stop");
        awaitPortFree();
        return parts;
    }

    private void failAfterEach(List<String> parts, Map<String, String> settings) throws Exception {
        for (String failing : parts) {
            IllegalStateException failure = assertThrows(IllegalStateException.class,
                    () -> EventHandlerServer.start(ConfigLoader.withOverrides(settings), part -> {
                        if (part.equals(failing)) {
                            throw new IllegalStateException("failed after the " + part);
                        }
                    }));
            assertEquals("failed after the " + failing, failure.getMessage());
            awaitNothingRunning("a failure after the " + failing);
            awaitPortFree();
        }
    }

    private void start(Map<String, String> settings) throws IOException {
        EventHandlerServer.start(ConfigLoader.withOverrides(settings)).close();
    }

    private Map<String, String> settings(String... keyValues) {
        Map<String, String> settings = new HashMap<>(Map.of("server.host", "127.0.0.1",
                "server.port", Integer.toString(port), "server.shutdown-grace-seconds", "1", "store.mode", "off"));
        for (int i = 0; i < keyValues.length; i += 2) {
            settings.put(keyValues[i], keyValues[i + 1]);
        }
        if ("true".equals(settings.get("cluster.enabled"))) {
            settings.remove("store.mode"); // a cluster's log is its stream
        }
        return settings;
    }

    /** Polls until no thread of the server's that was not running before the test is left, or fails naming them. */
    private void awaitNothingRunning(String after) throws InterruptedException {
        long deadline = System.nanoTime() + THREADS_END.toNanos();
        List<String> left = ours();
        while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(10_000_000); // poll interval only: the threads' end decides when we go on
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            left = ours();
        }
        assertEquals(List.of(), left, "threads left running after " + after);
    }

    /**
     * The server's threads: named by {@link eu.arrowhead.eventhandler.diagnostics.NamedThreads} or as its parts name them ({@code eh-} also names Grizzly's
     * selectors and HikariCP's housekeepers), the push sender's HTTP client's evictor, Grizzly's timer, and the NATS
     * client's: named after the node's connection, but for its connect and callback executors, which keep
     * {@code Executors}' default names (given a thread factory, the client would leave them to the caller to end).
     * Not counted: the JDK's HTTP client's (the Authorization system's and the Service Registry's: Java 17 has no
     * close for it, so its threads end once it is collected), and threads a library keeps for the whole JVM
     * (asynchronous file channels', MySQL's driver's, Prometheus').
     */
    private List<String> ours() {
        List<String> names = new ArrayList<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            String name = thread.getName();
            boolean named = name.startsWith("eh-") || name.startsWith("idle-connection-evictor")
                    || name.startsWith("HttpServer-") || name.startsWith("eventhandler ") || name.startsWith("pool-");
            if (named && !before.contains(thread)) {
                names.add(name);
            }
        }
        return names;
    }

    private void awaitPortFree() throws InterruptedException {
        Await.until("port " + port + " free", THREADS_END, () -> {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }
}

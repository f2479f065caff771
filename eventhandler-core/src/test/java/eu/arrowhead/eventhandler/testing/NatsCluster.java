package eu.arrowhead.eventhandler.testing;

import io.nats.client.Connection;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;

/**
 * Real {@code nats-server} processes with JetStream, clustered, on loopback ports of their own: what cluster mode's
 * tests run against. The binary is the Debian package's ({@code /usr/sbin/nats-server}, or {@code nats-server} on
 * the PATH; CI installs it). Each server keeps its JetStream files in a directory of the test's.
 */
public final class NatsCluster implements AutoCloseable {
    private final Path directory;
    private final int[] clientPorts;
    private final int[] routePorts;
    private final Process[] servers;
    private final boolean jetStream;
    private final Gate gate;

    /**
     * What the servers ask of their clients: {@code config} is added to each server's configuration (a {@code tls}
     * block, an {@code authorization} block), {@code scheme} is the URLs' ({@code tls} for a TLS listener), and
     * {@code client} sets the options that pass, for the tests' own checks of the servers.
     */
    public record Gate(String scheme, String config, Consumer<Options.Builder> client) {
        /** Plaintext, anyone may connect. */
        public static final Gate OPEN = new Gate("nats", "", options -> { });
    }

    private NatsCluster(Path directory, int size, boolean jetStream, Gate gate) {
        this.directory = directory;
        this.jetStream = jetStream;
        this.gate = gate;
        this.clientPorts = new int[size];
        this.routePorts = new int[size];
        this.servers = new Process[size];
        // All held open at once, so that no two are the same port.
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                clientPorts[i] = hold(held);
                routePorts[i] = hold(held);
            }
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // it was only held
                }
            }
        }
    }

    private static int hold(List<ServerSocket> held) {
        try {
            ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            held.add(socket);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts {@code size} servers (1 for a single server without routes) and waits until JetStream answers. */
    public static NatsCluster start(Path directory, int size) throws IOException, InterruptedException {
        return start(directory, size, Gate.OPEN);
    }

    /** As {@link #start(Path, int)}, the servers asking what {@code gate} says of their clients. */
    public static NatsCluster start(Path directory, int size, Gate gate) throws IOException, InterruptedException {
        Assumptions.assumeTrue(binaryExists() || "required".equals(System.getenv("EVENTHANDLER_TEST_NATS")),
                "nats-server is not installed (apt-get install nats-server); cluster mode's tests are skipped");
        NatsCluster cluster = new NatsCluster(directory, size, true, gate);
        boolean started = false;
        try {
            for (int i = 0; i < size; i++) {
                cluster.startServer(i);
            }
            cluster.awaitJetStream(Duration.ofSeconds(60));
            started = true;
            return cluster;
        } finally {
            if (!started) {
                cluster.close();
            }
        }
    }

    /** One server with JetStream off, as a misconfigured NATS would be; started once it takes connections. */
    public static NatsCluster startWithoutJetStream(Path directory) throws IOException, InterruptedException {
        Assumptions.assumeTrue(binaryExists() || "required".equals(System.getenv("EVENTHANDLER_TEST_NATS")),
                "nats-server is not installed (apt-get install nats-server); cluster mode's tests are skipped");
        NatsCluster server = new NatsCluster(directory, 1, false, Gate.OPEN);
        server.startServer(0);
        String url = server.url(0);
        Await.until("nats-server on " + url + " to take connections", Duration.ofSeconds(30),
                () -> server.answers(url, false));
        return server;
    }

    /** The binary the tests run. */
    public static String binary() {
        return new File("/usr/sbin/nats-server").canExecute() ? "/usr/sbin/nats-server" : "nats-server";
    }

    private static boolean binaryExists() {
        if (new File("/usr/sbin/nats-server").canExecute()) {
            return true;
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (new File(dir, "nats-server").canExecute()) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code nats://127.0.0.1:port} of every server ({@code tls://} behind a TLS gate), comma-separated, as
     * {@code cluster.nats-urls} takes them.
     */
    public String urls() {
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < clientPorts.length; i++) {
            urls.add(url(i));
        }
        return String.join(",", urls);
    }

    /** The URL of one server. */
    public String url(int server) {
        return gate.scheme() + "://127.0.0.1:" + clientPorts[server];
    }

    /** Starts server {@code i} (again, after {@link #kill}: with its files as they were). */
    public void startServer(int i) throws IOException {
        Path config = directory.resolve("nats-" + i + ".conf");
        StringBuilder text = new StringBuilder()
                .append("server_name: n").append(i).append('\n')
                .append("listen: 127.0.0.1:").append(clientPorts[i]).append('\n');
        text.append(gate.config()).append('\n');
        if (jetStream) {
            text.append("jetstream { store_dir: \"").append(directory.resolve("js-" + i)).append("\" }\n");
        }
        if (clientPorts.length > 1) {
            String routes = java.util.stream.IntStream.range(0, routePorts.length).filter(j -> j != i)
                    .mapToObj(j -> "nats-route://127.0.0.1:" + routePorts[j]).collect(Collectors.joining(", "));
            text.append("cluster { name: eh-test, listen: 127.0.0.1:").append(routePorts[i])
                    .append(", routes: [").append(routes).append("] }\n");
        }
        Files.writeString(config, text);
        Process server = new ProcessBuilder(binary(), "-c", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("nats-" + i + ".log").toFile()))
                .start();
        // Should the test JVM be stopped before it closes the cluster, the servers go with it.
        Runtime.getRuntime().addShutdownHook(new Thread(server::destroyForcibly));
        servers[i] = server;
    }

    /** The process id of server {@code i}, for a test that sends it signals of its own. */
    public long pid(int i) {
        return servers[i].pid();
    }

    /** SIGKILL of server {@code i}. */
    public void kill(int i) throws InterruptedException {
        Process server = servers[i];
        if (server != null) {
            server.toHandle().destroyForcibly();
            server.waitFor(30, TimeUnit.SECONDS);
            servers[i] = null;
        }
    }

    /** Waits until JetStream (with its meta leader, in a cluster) answers on every running server. */
    public void awaitJetStream(Duration timeout) throws InterruptedException {
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null) {
                String url = url(i);
                Process server = servers[i];
                try {
                    Await.until("JetStream on " + url + " to answer", timeout, () -> {
                        if (!server.isAlive()) {
                            throw new AssertionError("nats-server " + url + " exited");
                        }
                        return answers(url, true);
                    });
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "; its log:\n" + log(i), e);
                }
            }
        }
    }

    /** Whether the server takes a connection and, if asked, whether JetStream answers on it. */
    private boolean answers(String url, boolean jetStream) {
        Options.Builder options = new Options.Builder().server(url).connectionTimeout(Duration.ofSeconds(2))
                .noReconnect().errorListener(new ErrorListener() { });
        gate.client().accept(options);
        try (Connection nats = Nats.connect(options.build())) {
            if (jetStream) {
                nats.jetStreamManagement().getAccountStatistics();
            }
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    /** What server {@code i} logged. */
    public String log(int i) {
        try {
            return Files.readString(directory.resolve("nats-" + i + ".log"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 0; i < servers.length; i++) {
            kill(i);
        }
    }
}

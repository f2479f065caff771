package eu.arrowhead.eventhandler.bench;

import io.nats.client.Connection;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Three nats-server processes clustered with JetStream, on free loopback ports, for {@code bench cluster}: never
 * the NATS server on the standard port, which others on this machine may be using. Their files are in a
 * temporary directory, deleted by the caller.
 */
final class NatsServers implements AutoCloseable {
    private static final String BINARY = Files.isExecutable(Path.of("/usr/sbin/nats-server"))
            ? "/usr/sbin/nats-server" : "nats-server";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> clientPorts = new ArrayList<>();

    private NatsServers() {
    }

    /** Starts three clustered servers and returns once JetStream answers on each. */
    static NatsServers start(Path directory) {
        NatsServers servers = new NatsServers();
        try {
            int[] ports = freePorts(6);
            for (int i = 0; i < 3; i++) {
                servers.clientPorts.add(ports[i]);
            }
            for (int i = 0; i < 3; i++) {
                StringBuilder routes = new StringBuilder();
                for (int j = 0; j < 3; j++) {
                    if (j != i) {
                        routes.append(routes.length() == 0 ? "" : ", ").append("nats-route://127.0.0.1:").append(ports[3 + j]);
                    }
                }
                Path config = directory.resolve("nats-" + i + ".conf");
                Files.writeString(config, "server_name: bench" + i + "\nlisten: 127.0.0.1:" + ports[i]
                        + "\njetstream { store_dir: \"" + directory.resolve("js-" + i) + "\" }\n"
                        + "cluster { name: eh-bench, listen: 127.0.0.1:" + ports[3 + i] + ", routes: [" + routes + "] }\n");
                Process process = new ProcessBuilder(BINARY, "-c", config.toString()).redirectErrorStream(true)
                        .redirectOutput(directory.resolve("nats-" + i + ".log").toFile()).start();
                servers.processes.add(process);
            }
            Deadline ready = Deadline.in(READY_TIMEOUT, "JetStream to answer on the bench's NATS servers");
            for (int i = 0; i < 3; i++) {
                while (!jetStreamAnswers(servers.url(i))) {
                    if (ready.passed()) {
                        throw new BenchException("JetStream did not answer within " + READY_TIMEOUT.toSeconds()
                                + " s; see " + directory.resolve("nats-" + i + ".log"));
                    }
                    TimeUnit.MILLISECONDS.sleep(100);
                }
            }
            return servers;
        } catch (IOException e) {
            servers.close();
            throw new BenchException("cannot start " + BINARY + " (apt-get install nats-server): " + e, e);
        } catch (InterruptedException e) {
            servers.close();
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while starting NATS", e);
        } catch (RuntimeException e) {
            servers.close();
            throw e;
        }
    }

    private static int[] freePorts(int count) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : held) {
                socket.close();
            }
        }
    }

    private static boolean jetStreamAnswers(String url) {
        try (Connection nats = Nats.connect(new Options.Builder().server(url).connectionTimeout(Duration.ofSeconds(2))
                .noReconnect().errorListener(new ErrorListener() { }).build())) {
            nats.jetStreamManagement().getAccountStatistics();
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    String url(int server) {
        return "nats://127.0.0.1:" + clientPorts.get(server);
    }

    /** Every server's URL, comma-separated, as {@code cluster.nats-urls} takes them. */
    String urls() {
        return String.join(",", List.of(url(0), url(1), url(2)));
    }

    List<Long> pids() {
        return processes.stream().map(Process::pid).toList();
    }

    @Override
    public void close() {
        for (Process process : processes) {
            process.destroyForcibly();
        }
        for (Process process : processes) {
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

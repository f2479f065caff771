package eu.arrowhead.eventhandler.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.EventHandlerServer;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;

/**
 * A real server on an ephemeral port, with real HTTP clients to talk to it (a {@link TestClient}: Apache
 * HttpClient with kept-alive connections for requests, the JDK's client for SSE streams).
 */
public final class TestServer implements AutoCloseable {
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final EventHandlerServer server;
    private final TestClient client;

    private TestServer(EventHandlerServer server, SSLContext clientContext) {
        this.server = server;
        this.client = new TestClient(server.baseUri(), clientContext);
    }

    /**
     * Starts a server with the defaults but port 0 and no event store (the store's tests give theirs), then
     * {@code keyValues} (key, value, key, value...).
     */
    public static TestServer start(String... keyValues) {
        return start(null, keyValues);
    }

    /**
     * As {@link #start(String...)}, for a server in secure mode ({@link TestPki#serverSettings}): this
     * server's own requests and streams use {@code clientContext}; {@link #client} makes other callers.
     */
    public static TestServer start(SSLContext clientContext, String... keyValues) {
        Map<String, String> overrides = new HashMap<>();
        overrides.put("server.host", "127.0.0.1");
        overrides.put("server.port", "0");
        overrides.put("server.shutdown-grace-seconds", "2");
        overrides.put("store.mode", "off");
        for (int i = 0; i < keyValues.length; i += 2) {
            overrides.put(keyValues[i], keyValues[i + 1]);
        }
        if ("true".equals(overrides.get("cluster.enabled"))) {
            overrides.remove("store.mode"); // a cluster's log is its stream
        }
        try {
            return new TestServer(EventHandlerServer.start(ConfigLoader.withOverrides(overrides)), clientContext);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Closes each of them, even when closing one fails: for a test class's clients and servers. */
    public static void closeAll(AutoCloseable... closeables) {
        for (AutoCloseable closeable : closeables) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception ignored) {
                // the next one still closes
            }
        }
    }

    public EventHandlerServer server() {
        return server;
    }

    public int port() {
        return server.port();
    }

    /** Clients of this server that call it as the system whose key {@code context} holds (close them). */
    public TestClient client(SSLContext context) {
        return new TestClient(server.baseUri(), context);
    }

    public URI uri(String pathAndQuery) {
        return client.uri(pathAndQuery);
    }

    /** POSTs a JSON body; returns the response whatever its status. */
    public Reply post(String path, String json) {
        return client.post(path, json);
    }

    /** POSTs a body with the given content type, or none if it is null. */
    public Reply post(String path, String body, String contentType) {
        return client.post(path, body, contentType);
    }

    /** POSTs a JSON body with an {@code Idempotency-Key} header; returns the response whatever its status. */
    public Reply postKeyed(String path, String json, String key) {
        HttpPost post = new HttpPost(uri(path));
        post.setEntity(new StringEntity(json, ContentType.APPLICATION_JSON));
        post.setHeader("Idempotency-Key", key);
        return send(post);
    }

    public Reply get(String path, String... headers) {
        return client.get(path, headers);
    }

    /** Publishes one event and returns its id; fails the test unless the answer is 200. */
    public long publish(String eventType, String payload) {
        Reply response = post("/eventhandler/publish",
                "{\"eventType\":\"" + eventType + "\",\"payload\":\"" + payload + "\"}");
        if (response.statusCode() != 200) {
            throw new AssertionError("publish answered " + response.statusCode() + ": " + response.body());
        }
        return Long.parseLong(response.body().replaceAll("\\D", ""));
    }

    public Reply send(HttpUriRequestBase request) {
        return client.send(request);
    }

    /** A topic as {@code GET /eventhandler/mgmt/topics} lists it, if the server holds it. */
    public Optional<TopicStats> topic(String eventType) {
        try {
            return Arrays.stream(JSON.readValue(get("/eventhandler/mgmt/topics").body(), TopicStats[].class))
                    .filter(topic -> topic.eventType().equals(eventType)).findFirst();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The value of one series of {@code GET /metrics}.
     *
     * @param series the name with its labels, as in {@code eventhandler_subscriber_disconnects_total{reason="slow"}}
     */
    public double metric(String series) {
        return client.metric(series);
    }

    /** The value of a series that appears once it counted something (a counter per subscription); 0 until then. */
    public double counted(String series) {
        return client.counted(series);
    }

    /** A port on the loopback address that was free a moment ago, for a server that starts later. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A free port below the kernel's ephemeral range, for a listener that is closed and opened again on the same
     * port (a proxy cut and restored, a server killed and started again): no outgoing connection is ever given it
     * as its local port, so none can take it in between. (An ephemeral one was taken so once in CI, and the
     * restore failed with "Address already in use".)
     */
    public static int portNoConnectionTakes() {
        int ephemeralLow;
        try {
            // Not Files.readString: it returned only the first byte of this /proc file here (JDK 17 and 25).
            ephemeralLow = Integer.parseInt(Files.readAllLines(EPHEMERAL_RANGE).get(0).strip().split("\\s+")[0]);
        } catch (IOException | RuntimeException notLinux) {
            return freePort();
        }
        for (int attempt = 0; attempt < 100; attempt++) {
            int candidate = ThreadLocalRandom.current().nextInt(Math.min(10_000, ephemeralLow / 2), ephemeralLow);
            try (ServerSocket probe = new ServerSocket()) {
                probe.setReuseAddress(true);
                probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), candidate));
                return candidate;
            } catch (IOException taken) {
                // another one
            }
        }
        return freePort();
    }

    /** Opens an SSE stream; waits until the server's opening comment has arrived. */
    public SseStream subscribe(String query, String... headers) {
        return client.subscribe(query, headers);
    }

    @Override
    public void close() {
        client.close();
        server.close();
    }
}

package eu.arrowhead.eventhandler.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.EventHandlerServer;
import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;

/**
 * A real server on an ephemeral port, with real HTTP clients to talk to it: Apache HttpClient with kept-alive
 * connections for requests, the JDK's client for SSE streams (one connection each, never reused: each sends
 * {@code Connection: close}).
 */
public final class TestServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final EventHandlerServer server;
    private final CloseableHttpClient requests = HttpClients.custom()
            .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                    .setMaxConnPerRoute(64).setMaxConnTotal(64).build())
            .disableAutomaticRetries()
            .build();
    private final HttpClient streams = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private TestServer(EventHandlerServer server) {
        this.server = server;
    }

    /**
     * Starts a server with the defaults but port 0 and no event store (the store's tests give theirs), then
     * {@code keyValues} (key, value, key, value...).
     */
    public static TestServer start(String... keyValues) {
        Map<String, String> overrides = new HashMap<>();
        overrides.put("server.host", "127.0.0.1");
        overrides.put("server.port", "0");
        overrides.put("server.shutdown-grace-seconds", "2");
        overrides.put("store.mode", "off");
        for (int i = 0; i < keyValues.length; i += 2) {
            overrides.put(keyValues[i], keyValues[i + 1]);
        }
        try {
            return new TestServer(EventHandlerServer.start(ConfigLoader.withOverrides(overrides)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public EventHandlerServer server() {
        return server;
    }

    public int port() {
        return server.port();
    }

    public URI uri(String pathAndQuery) {
        return server.baseUri().resolve(pathAndQuery);
    }

    HttpClient streamClient() {
        return streams;
    }

    /** POSTs a JSON body; returns the response whatever its status. */
    public Reply post(String path, String json) {
        return post(path, json, "application/json");
    }

    /** POSTs a body with the given content type, or none if it is null. */
    public Reply post(String path, String body, String contentType) {
        HttpUriRequestBase request = new HttpUriRequestBase("POST", uri(path));
        request.setEntity(new ByteArrayEntity(body.getBytes(StandardCharsets.UTF_8),
                contentType == null ? null : ContentType.parse(contentType)));
        return send(request);
    }

    public Reply get(String path, String... headers) {
        HttpGet request = new HttpGet(uri(path));
        for (int i = 0; i < headers.length; i += 2) {
            request.setHeader(headers[i], headers[i + 1]);
        }
        return send(request);
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
        try {
            return requests.execute(request, response -> {
                Map<String, String> headers = new HashMap<>();
                for (Header header : response.getHeaders()) {
                    headers.put(header.getName().toLowerCase(Locale.ROOT), header.getValue());
                }
                String body = response.getEntity() == null ? "" : EntityUtils.toString(response.getEntity(),
                        StandardCharsets.UTF_8);
                return new Reply(response.getCode(), body, headers);
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        String body = get("/metrics").body();
        for (String line : body.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).strip());
            }
        }
        throw new AssertionError("no series " + series + " in /metrics:\n" + body);
    }

    /** A port on the loopback address that was free a moment ago, for a server that starts later. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Opens an SSE stream; waits until the server's opening comment has arrived. */
    public SseStream subscribe(String query, String... headers) {
        return SseStream.open(this, query, headers);
    }

    @Override
    public void close() {
        try {
            requests.close();
        } catch (IOException ignored) {
            // the server goes away next anyway
        }
        server.close();
    }
}

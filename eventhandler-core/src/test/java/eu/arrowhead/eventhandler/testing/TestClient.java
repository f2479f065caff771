package eu.arrowhead.eventhandler.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.TimeValue;

/**
 * Real HTTP clients for one caller of a server: Apache HttpClient with kept-alive connections for requests,
 * the JDK's client for SSE streams (one connection each, never reused: each sends {@code Connection: close}).
 * With a TLS context they speak HTTPS as the system its key names.
 */
public final class TestClient implements AutoCloseable {
    private final URI base;
    private final CloseableHttpClient requests;
    private final HttpClient streams;

    /** @param context the TLS context for an https {@code base}, or {@code null} */
    public TestClient(URI base, SSLContext context) {
        this.base = base;
        // A kept-alive connection idle for a moment is checked before it is used again: tests shorten
        // server.idle-timeout-seconds, and a request on a connection the server had just closed failed with
        // NoHttpResponseException (BadInputTest in CI, idle 2.7 s against a 2 s timeout).
        PoolingHttpClientConnectionManagerBuilder connections = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnPerRoute(64).setMaxConnTotal(64)
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setValidateAfterInactivity(TimeValue.ofMilliseconds(100)).build());
        HttpClient.Builder streamClient = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5));
        if (context != null) {
            connections.setTlsSocketStrategy(new DefaultClientTlsStrategy(context));
            streamClient.sslContext(context);
        }
        this.requests = HttpClients.custom().setConnectionManager(connections.build())
                .disableAutomaticRetries().build();
        this.streams = streamClient.build();
    }

    public URI uri(String pathAndQuery) {
        return base.resolve(pathAndQuery);
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

    /**
     * The value of one series of {@code GET /metrics}.
     *
     * @param series the name with its labels, as in {@code eventhandler_subscriber_disconnects_total{reason="slow"}}
     */
    public double metric(String series) {
        String body = get("/metrics").body();
        OptionalDouble value = value(body, series);
        if (value.isEmpty()) {
            throw new AssertionError("no series " + series + " in /metrics:\n" + body);
        }
        return value.getAsDouble();
    }

    /** The value of a series that appears once it counted something (a counter per subscription); 0 until then. */
    public double counted(String series) {
        return value(get("/metrics").body(), series).orElse(0);
    }

    private static OptionalDouble value(String metrics, String series) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(series + " ")) {
                return OptionalDouble.of(Double.parseDouble(line.substring(series.length() + 1).strip()));
            }
        }
        return OptionalDouble.empty();
    }

    /** Sends a request; an I/O failure (a refused TLS handshake too) is an {@link UncheckedIOException}. */
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

    /** Opens an SSE stream; waits until the server's opening comment has arrived. */
    public SseStream subscribe(String query, String... headers) {
        return SseStream.open(streams, uri("/eventhandler/events" + query), headers);
    }

    /**
     * The status with which the server answers an SSE subscription, without reading the stream (a refused
     * one answers at once; {@link #get} reads its error body).
     */
    public int streamStatus(String query) throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri("/eventhandler/events" + query)).GET()
                .header("Connection", "close").build();
        try {
            HttpResponse<InputStream> response = streams.send(request, HttpResponse.BodyHandlers.ofInputStream());
            response.body().close();
            return response.statusCode();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            requests.close();
        } catch (IOException ignored) {
            // the server goes away next anyway
        }
    }
}

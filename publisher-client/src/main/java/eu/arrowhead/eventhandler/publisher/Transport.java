package eu.arrowhead.eventhandler.publisher;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.UnknownHostException;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.glassfish.jersey.apache5.connector.Apache5ClientProperties;
import org.glassfish.jersey.apache5.connector.Apache5ConnectorProvider;
import org.glassfish.jersey.CommonProperties;
import org.glassfish.jersey.apache5.connector.Apache5HttpClientBuilderConfigurator;
import org.glassfish.jersey.client.ClientConfig;
import org.glassfish.jersey.client.ClientProperties;
import org.glassfish.jersey.client.RequestEntityProcessing;

/**
 * The HTTP side of a publisher: a Jersey client on Apache HttpClient 5 with a pool of kept-alive
 * connections, and one POST at a time turned into its answer or a {@link PublishException}.
 *
 * <p>Cost per publish is client CPU that an application system on a Raspberry Pi shares with its own work,
 * so the pipeline is kept to what a JSON POST needs: bodies are encoded and answers decoded here with one
 * Jackson mapper, as bytes (Jersey's entity providers looked up and ran Jackson's JAX-RS layer per request),
 * Jersey's feature auto-discovery is off, and Apache's cookie, compression, redirect and retry stages, which
 * a publish never uses, are left out of its execution chain (docs/performance.md, "Client libraries").
 */
final class Transport implements AutoCloseable {
    /** A kept-alive connection idle for longer than this is checked before it is used again. */
    private static final TimeValue VALIDATE_AFTER_IDLE = TimeValue.ofSeconds(1);
    private static final int MAX_DETAIL_CHARS = 300;

    /** Reads answers with fields it does not know, so that newer servers stay compatible. */
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final ObjectWriter WRITER = JSON.writer();
    /**
     * Sent with every request. Without one, Jersey composes its own per request through its localised
     * message bundle, which was a tenth of a publish's client CPU.
     */
    private static final String USER_AGENT = "eventhandler-publisher";

    private final PoolingHttpClientConnectionManager connections;
    private final Client client;

    Transport(Duration connectTimeout, Duration readTimeout, int maxConnections, SSLContext sslContext) {
        PoolingHttpClientConnectionManagerBuilder pool = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnPerRoute(maxConnections)
                .setMaxConnTotal(maxConnections)
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(Timeout.of(connectTimeout))
                        .setSocketTimeout(Timeout.of(readTimeout))
                        .setValidateAfterInactivity(VALIDATE_AFTER_IDLE)
                        .build());
        if (sslContext != null) {
            pool.setTlsSocketStrategy(new DefaultClientTlsStrategy(sslContext));
        }
        connections = pool.build();
        ClientConfig config = new ClientConfig()
                .connectorProvider(new Apache5ConnectorProvider())
                .property(Apache5ClientProperties.CONNECTION_MANAGER, connections)
                // Apache's own retries (and its 503 handling) off: only the RetryPolicy retries.
                .property(Apache5ClientProperties.RETRY_STRATEGY,
                        new DefaultHttpRequestRetryStrategy(0, TimeValue.ZERO_MILLISECONDS))
                // Waiting for a pooled connection that other threads hold is bounded like an answer.
                .property(Apache5ClientProperties.REQUEST_CONFIG,
                        RequestConfig.custom().setConnectionRequestTimeout(Timeout.of(readTimeout)).build())
                .property(ClientProperties.CONNECT_TIMEOUT, (int) connectTimeout.toMillis())
                .property(ClientProperties.READ_TIMEOUT, (int) readTimeout.toMillis())
                .property(ClientProperties.FOLLOW_REDIRECTS, false)
                // A Content-Length body rather than a chunked one: events are small and already in memory.
                .property(ClientProperties.REQUEST_ENTITY_PROCESSING, RequestEntityProcessing.BUFFERED)
                .property(CommonProperties.FEATURE_AUTO_DISCOVERY_DISABLE, true)
                .register((Apache5HttpClientBuilderConfigurator) builder -> builder
                        .disableAutomaticRetries()
                        .disableContentCompression()
                        .disableCookieManagement()
                        .disableRedirectHandling()
                        .disableAuthCaching());
        client = ClientBuilder.newClient(config);
    }

    /** Where to POST: the URI (for messages, also after the client is closed) and its Jersey target. */
    record Endpoint(URI uri, WebTarget target) {
    }

    Endpoint endpoint(URI uri) {
        return new Endpoint(uri, client.target(uri));
    }

    /**
     * Encodes a request body as JSON, once for all its attempts: each sends the same bytes, which the server's
     * {@code Idempotency-Key} check compares.
     *
     * @param what names the operation in messages ("publish")
     */
    static byte[] encode(String what, Object body) throws PublishException {
        try {
            return WRITER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw PublishException.failed(what + " failed: the request cannot be encoded as JSON: "
                    + e.getOriginalMessage(), e);
        }
    }

    /**
     * POSTs {@code body}, JSON already {@link #encode encoded}, and reads a successful answer as
     * {@code answerType}; closes the response, so that its connection goes back to the pool.
     *
     * @param what            names the operation in messages ("publish")
     * @param key             the request's {@code Idempotency-Key}, the same for each attempt of one publish
     * @param responseTimeout how long the server may stay silent before this attempt fails: the read timeout,
     *                        or less when the publish's deadline is nearer
     */
    <T> T post(String what, Endpoint endpoint, byte[] body, String key, Duration responseTimeout,
               Class<T> answerType) throws PublishException {
        try {
            return exchange(what, endpoint, body, key, responseTimeout, answerType);
        } catch (RuntimeException e) {
            // Jersey's own failures, as when the publisher is closed under a running publish ("Client instance
            // has been closed") or close() interrupts Jersey's start: another attempt would fare no better.
            throw PublishException.failed(what + " to " + endpoint.uri() + " failed: " + rootMessage(e), e);
        }
    }

    private <T> T exchange(String what, Endpoint endpoint, byte[] body, String key, Duration responseTimeout,
                           Class<T> answerType) throws PublishException {
        Response response;
        try {
            response = endpoint.target().request(MediaType.APPLICATION_JSON_TYPE)
                    .property(ClientProperties.READ_TIMEOUT, (int) Math.max(1, responseTimeout.toMillis()))
                    .header(HttpHeaders.USER_AGENT, USER_AGENT)
                    .header(RequestKeys.HEADER, key)
                    .post(Entity.entity(body, MediaType.APPLICATION_JSON_TYPE));
        } catch (ProcessingException e) {
            throw sendFailure(what, endpoint.uri(), e);
        }
        try (response) {
            int status = response.getStatus();
            if (response.getStatusInfo().getFamily() != Response.Status.Family.SUCCESSFUL) {
                throw refusal(what, endpoint.uri(), response);
            }
            byte[] answerBody = readAnswer(what, endpoint.uri(), response);
            T answer;
            try {
                answer = JSON.readValue(answerBody, answerType);
            } catch (IOException e) {
                throw PublishException.unreadableAnswer(what, status, e);
            }
            if (answer == null) {
                throw PublishException.unreadableAnswer(what, status, new IOException("the body is null"));
            }
            return answer;
        }
    }

    /** Reads the whole answer: an I/O failure here is a lost answer like any other. */
    private static byte[] readAnswer(String what, URI uri, Response response) throws PublishException {
        try {
            return response.readEntity(byte[].class);
        } catch (ProcessingException e) {
            throw PublishException.noAnswer(what + " to " + uri + ": the answer broke off: " + rootMessage(e), e);
        }
    }

    private static PublishException sendFailure(String what, URI uri, ProcessingException e) {
        IOException io = ioCause(e);
        if (io == null || io instanceof JsonProcessingException) {
            return PublishException.failed(what + " to " + uri + " failed: " + rootMessage(e), e);
        }
        if (io instanceof SSLHandshakeException || io instanceof SSLPeerUnverifiedException) {
            return PublishException.failed(what + " to " + uri + ": TLS handshake failed: " + rootMessage(io), e);
        }
        if (io instanceof ConnectException || io instanceof ConnectTimeoutException
                || io instanceof UnknownHostException || io instanceof NoRouteToHostException
                || io instanceof ConnectionRequestTimeoutException) {
            return PublishException.notSent(what + " to " + uri + ": could not connect: " + rootMessage(io), e);
        }
        String reason = io instanceof InterruptedIOException ? "no answer in time: " : "no answer: ";
        return PublishException.noAnswer(what + " to " + uri + ": " + reason + rootMessage(io), e);
    }

    private static PublishException refusal(String what, URI uri, Response response) throws PublishException {
        byte[] body = readAnswer(what, uri, response);
        ErrorMessage error = null;
        if (MediaType.APPLICATION_JSON_TYPE.isCompatible(response.getMediaType())) {
            try {
                ErrorMessage parsed = JSON.readValue(body, ErrorMessage.class);
                error = parsed != null && parsed.errorMessage() != null ? parsed : null;
            } catch (IOException notAnErrorMessage) {
                // described by its text below
            }
        }
        String detail = error != null ? error.errorMessage() : text(body, response);
        return PublishException.refused(what, response.getStatus(), detail, error, retryAfter(response));
    }

    private static String text(byte[] bytes, Response response) {
        String body = new String(bytes, StandardCharsets.UTF_8).strip();
        if (body.isEmpty()) {
            return response.getStatusInfo().getReasonPhrase();
        }
        return body.length() <= MAX_DETAIL_CHARS ? body : body.substring(0, MAX_DETAIL_CHARS) + "...";
    }

    /** {@code Retry-After} in seconds; null when absent, or an HTTP date (then the backoff applies). */
    private static Duration retryAfter(Response response) {
        String value = response.getHeaderString("Retry-After");
        if (value == null || !value.strip().matches("\\d{1,9}")) {
            return null;
        }
        return Duration.ofSeconds(Long.parseLong(value.strip()));
    }

    private static IOException ioCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException io) {
                return io;
            }
        }
        return null;
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = e.getMessage() != null ? e.getMessage() : root.getMessage();
        return message != null ? message : root.getClass().getSimpleName();
    }

    @Override
    public void close() {
        client.close();
        connections.close(CloseMode.IMMEDIATE);
    }
}

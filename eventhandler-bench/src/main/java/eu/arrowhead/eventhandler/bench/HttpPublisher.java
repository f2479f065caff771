package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.BatchPublishResponse;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.PublishResponse;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpHeaders;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;

/**
 * Publishes events one at a time with Apache HttpClient 5 (classic) over a pool of one connection: kept
 * alive from one publish to the next, or closed after each as the original Event Handler's clients did.
 */
final class HttpPublisher implements PublishLoop.Publisher {
    private static final Timeout CONNECT_TIMEOUT = Timeout.ofSeconds(5);
    private static final Timeout RESPONSE_TIMEOUT = Timeout.ofSeconds(10);

    private final CloseableHttpClient client;
    private final URI publishUri;
    private final URI batchUri;
    private final boolean newConnectionPerPublish;
    /** The system named as every event's source, or null for none. */
    private final SystemRequest source;

    /**
     * @param newConnectionPerPublish send {@code Connection: close}, so that every publish pays for a new
     *                                TCP connection
     */
    HttpPublisher(URI base, boolean newConnectionPerPublish) {
        this(base, newConnectionPerPublish, null, null);
    }

    /**
     * A kept-alive publisher to an https {@code base} as the system {@code tls}'s certificate names: in secure
     * mode an event must name its publisher, {@code sourceSystemName}, as its source.
     */
    HttpPublisher(URI base, SSLContext tls, String sourceSystemName) {
        this(base, false, tls, sourceSystemName);
    }

    private HttpPublisher(URI base, boolean newConnectionPerPublish, SSLContext tls, String sourceSystemName) {
        this.publishUri = base.resolve("/eventhandler/publish");
        this.batchUri = base.resolve("/eventhandler/publish/batch");
        this.newConnectionPerPublish = newConnectionPerPublish;
        this.source = sourceSystemName == null ? null : SystemRequest.named(sourceSystemName);
        PoolingHttpClientConnectionManagerBuilder connections = PoolingHttpClientConnectionManagerBuilder.create();
        if (tls != null) {
            connections.setTlsSocketStrategy(ClientTlsStrategyBuilder.create().setSslContext(tls).buildClassic());
        }
        this.client = HttpClients.custom()
                .setConnectionManager(connections
                        .setMaxConnPerRoute(1).setMaxConnTotal(1)
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(CONNECT_TIMEOUT).setSocketTimeout(RESPONSE_TIMEOUT).build())
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setConnectionRequestTimeout(CONNECT_TIMEOUT).setResponseTimeout(RESPONSE_TIMEOUT).build())
                // A retried publish would be a second event: the bench must see every failure as it is.
                .disableAutomaticRetries()
                // Else a connection whose TLS session carries our certificate is tied to its principal, which no
                // request presents: every publish would open a new mutual-TLS connection (as PushSender's did).
                .disableConnectionState()
                .build();
    }

    /** The JSON of an event, made before the clock starts so that it is not part of the measured time. */
    static byte[] body(String eventType, String payload) {
        return json(EventPublishRequest.of(eventType, payload));
    }

    private static byte[] json(Object request) {
        try {
            return JsonMapper.get().writeValueAsBytes(request);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public long publish(String eventType, String payload) {
        return publish(json(new EventPublishRequest(eventType, payload, null, source, null)));
    }

    /** Publishes and returns the id the server gave the event; any answer but 200 is a failure. */
    long publish(byte[] body) {
        Answer answer = send(body);
        if (!answer.accepted()) {
            throw new BenchException("publish was answered " + answer.code() + ": " + answer.refusal());
        }
        return answer.ids()[0];
    }

    /** The JSON array of {@code count} events, for {@code publish/batch}. */
    static byte[] batchBody(String eventType, String payload, int count) {
        return json(Collections.nCopies(count, EventPublishRequest.of(eventType, payload)));
    }

    /** Publishes and returns the server's answer, whatever it is; only no answer at all is a failure. */
    Answer send(byte[] body) {
        return send(publishUri, body, answer -> new long[] {
                JsonMapper.get().readValue(answer, PublishResponse.class).id()});
    }

    /** Publishes a {@link #batchBody} and returns the server's answer, with the ids of a 200. */
    Answer sendBatch(byte[] body) {
        return send(batchUri, body, answer -> JsonMapper.get().readValue(answer, BatchPublishResponse.class)
                .ids().stream().mapToLong(Long::longValue).toArray());
    }

    /** How the ids are read from the body of a 200. */
    @FunctionalInterface
    private interface IdReader {
        long[] ids(byte[] body) throws IOException;
    }

    private Answer send(URI uri, byte[] body, IdReader ids) {
        HttpPost post = new HttpPost(uri);
        post.setEntity(new ByteArrayEntity(body, ContentType.APPLICATION_JSON));
        if (newConnectionPerPublish) {
            post.setHeader(HttpHeaders.CONNECTION, "close");
        }
        try {
            return client.execute(post, response -> {
                byte[] answer = response.getEntity() == null ? new byte[0]
                        : EntityUtils.toByteArray(response.getEntity());
                if (response.getCode() != 200) {
                    return new Answer(response.getCode(), new long[0], new String(answer, StandardCharsets.UTF_8));
                }
                return new Answer(200, ids.ids(answer), null);
            });
        } catch (IOException e) {
            throw new BenchException("publish to " + uri + " failed: " + e, e);
        }
    }

    /**
     * The server's answer to one publish.
     *
     * @param code    the HTTP status
     * @param ids     the events' ids, for a 200
     * @param refusal the body of any other answer
     */
    record Answer(int code, long[] ids, String refusal) {

        boolean accepted() {
            return code == 200;
        }
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException ignored) {
            // the connection is gone either way
        }
    }
}

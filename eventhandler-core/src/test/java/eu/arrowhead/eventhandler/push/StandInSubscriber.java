package eu.arrowhead.eventhandler.push;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.TestPki;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import java.util.function.ToIntBiFunction;
import java.util.function.ToIntFunction;

/**
 * An Arrowhead 4.x push subscriber standing in for a real one: a local HTTP server that records the bodies
 * POSTed to its notify URI. It can answer with an error status per request or per payload (its body then says
 * {@code refused with <status>}), or hold every answer until {@link #release()} (a subscriber that hangs).
 */
public final class StandInSubscriber implements AutoCloseable {
    static final String NOTIFY_PATH = "/notify";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final List<String> bodies = new ArrayList<>();
    /** The client end of every connection a POST came on. */
    private final Set<InetSocketAddress> connections = new HashSet<>();
    private final CountDownLatch hold;
    /** The status of the n-th request (from 1) with this body. */
    private final ToIntBiFunction<Integer, String> statusOfRequest;
    private int requests;

    private StandInSubscriber(boolean hangs, ToIntBiFunction<Integer, String> statusOfRequest, TestPki tls) {
        this.hold = new CountDownLatch(hangs ? 1 : 0);
        this.statusOfRequest = statusOfRequest;
        try {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
            server = tls == null ? HttpServer.create(address, 0) : tls.httpsServer("subscriber", 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newFixedThreadPool(2));
        server.createContext(NOTIFY_PATH, exchange -> {
            String body;
            try (InputStream in = exchange.getRequestBody()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            int status;
            synchronized (this) {
                connections.add(exchange.getRemoteAddress());
                status = statusOfRequest.applyAsInt(++requests, body);
                if (status == 200) {
                    bodies.add(body);
                }
                notifyAll();
            }
            try {
                hold.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] answer = status == 200 ? new byte[0]
                    : ("refused with " + status).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, answer.length == 0 ? -1 : answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
    }

    /** Answers every POST with 200 at once. */
    public static StandInSubscriber healthy() {
        return new StandInSubscriber(false, (request, body) -> 200, null);
    }

    /** Answers every POST with 200 at once, over mutual TLS as the system {@code subscriber} of this PKI. */
    public static StandInSubscriber healthyOverTls(TestPki tls) {
        return new StandInSubscriber(false, (request, body) -> 200, tls);
    }

    /** Answers the n-th POST (from 1) with the given status. */
    public static StandInSubscriber answering(IntUnaryOperator statusOfRequest) {
        return new StandInSubscriber(false, (request, body) -> statusOfRequest.applyAsInt(request), null);
    }

    /** Answers each POST with the status given for the event's payload. */
    public static StandInSubscriber answeringPayloads(ToIntFunction<String> statusOfPayload) {
        return new StandInSubscriber(false,
                (request, body) -> statusOfPayload.applyAsInt(read(body).get("payload").asText()), null);
    }

    /** Receives POSTs but answers none until {@link #release()}. */
    public static StandInSubscriber hanging() {
        return new StandInSubscriber(true, (request, body) -> 200, null);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** The JSON of a SubscriptionRequest for this subscriber, with the given extra fields (JSON members). */
    public String subscription(String systemName, String eventType, String extraFields) {
        return "{\"eventType\":\"" + eventType + "\",\"subscriberSystem\":{\"systemName\":\"" + systemName
                + "\",\"address\":\"127.0.0.1\",\"port\":" + port() + "},\"notifyUri\":\"" + NOTIFY_PATH + "\""
                + (extraFields.isEmpty() ? "" : "," + extraFields) + "}";
    }

    public synchronized List<String> bodies() {
        return List.copyOf(bodies);
    }

    public synchronized int requests() {
        return requests;
    }

    /** How many connections the POSTs came on, so far. */
    public synchronized int connections() {
        return connections.size();
    }

    /** The payloads received with 200, in order. */
    public List<String> payloads() {
        return bodies().stream().map(body -> read(body).get("payload").asText()).toList();
    }

    public static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until this many events were received with 200. */
    public void awaitEvents(int count) throws InterruptedException {
        Await.until(count + " events at the stand-in subscriber (has " + bodies().size() + ")",
                Duration.ofSeconds(10), () -> bodies().size() >= count);
    }

    public void release() {
        hold.countDown();
    }

    @Override
    public void close() {
        release();
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}

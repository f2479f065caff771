package eu.arrowhead.eventhandler.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for the Arrowhead Authorization system, over mutual TLS with the {@link TestPki}'s
 * {@code authorization} certificate as in a secure local cloud, or over plain HTTP as in an insecure one:
 * answers {@code GET /authorization/echo} and {@code POST /authorization/subscription/check} with the
 * publishers set for the consumer by {@link #authorize} (none for a consumer not set), and keeps the check
 * requests' bodies.
 */
public final class AuthorizationStandIn implements AutoCloseable {
    private final HttpServer server;
    private final Map<String, Set<String>> publishers = new ConcurrentHashMap<>();
    private final List<String> checks = new CopyOnWriteArrayList<>();
    private final List<String> callers = new CopyOnWriteArrayList<>();
    private final ExecutorService answering = Executors.newFixedThreadPool(16);
    private final Set<String> dropped = ConcurrentHashMap.newKeySet();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();
    private volatile Duration delay = Duration.ZERO;

    /** Starts it over mutual TLS on {@code port} (0 for any) of the loopback address. */
    public AuthorizationStandIn(TestPki pki, int port) {
        this(https(pki, port));
    }

    private AuthorizationStandIn(HttpServer server) {
        this.server = server;
        server.createContext("/authorization/echo", exchange -> JsonAnswer.send(exchange, 200, "Got it!"));
        server.createContext("/authorization/subscription/check", this::check);
        // Several threads, as the real one (Spring Boot) has: checks sent together are answered together.
        server.setExecutor(answering);
        server.start();
    }

    /**
     * From now on each check is answered {@code delay} after it arrived, as by a busy Authorization system
     * (the delay stands in for its database, not for synchronisation).
     */
    public void answerAfter(Duration delay) {
        this.delay = delay;
    }

    /** From now on the checks of {@code consumer} are cut off unanswered, as by a network that fails. */
    public void dropChecksOf(String consumer) {
        dropped.add(consumer);
    }

    /** The most checks that were being answered at the same time so far. */
    public int mostChecksAtOnce() {
        return mostAtOnce.get();
    }

    /** Starts it over plain HTTP on {@code port} (0 for any) of the loopback address. */
    public static AuthorizationStandIn plainHttp(int port) {
        try {
            return new AuthorizationStandIn(HttpServer.create(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static HttpsServer https(TestPki pki, int port) {
        try {
            return pki.httpsServer("authorization", port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** From now on, {@code consumer} may receive events from {@code publisherNames}. */
    public void authorize(String consumer, String... publisherNames) {
        publishers.put(consumer, Set.of(publisherNames));
    }

    /**
     * Changes {@code consumer}'s rules and announces it to the Event Handler as the 4.x Authorization system
     * does: {@code POST /eventhandler/publish/authupdate} with a {@code SUBSCRIBER_AUTH_UPDATE} event whose
     * payload is the consumer's system id, sent as itself.
     *
     * @param eventHandler a client of the Event Handler with the Authorization system's certificate (secure
     *                     mode), or any client (insecure mode)
     * @return the Event Handler's answer
     */
    public Reply changeRules(TestClient eventHandler, String consumer, String... publisherNames) {
        authorize(consumer, publisherNames);
        return eventHandler.post("/eventhandler/publish/authupdate", "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\","
                + "\"payload\":\"" + Math.abs(consumer.hashCode() % 1000 + 1) + "\",\"source\":{\"systemName\":"
                + "\"authorization\",\"address\":\"127.0.0.1\",\"port\":" + server.getAddress().getPort() + "},"
                + "\"timeStamp\":\"" + Instant.now() + "\"}");
    }

    /** {@code https://127.0.0.1:PORT/authorization} ({@code http} for plain HTTP), for {@code security.authorization.uri}. */
    public URI uri() {
        return URI.create((server instanceof HttpsServer ? "https" : "http") + "://127.0.0.1:"
                + server.getAddress().getPort() + "/authorization");
    }

    /** The bodies of the check requests so far. */
    public List<String> checks() {
        return checks;
    }

    /** The subjects of the client certificates of the check requests so far (none over plain HTTP). */
    public List<String> callers() {
        return callers;
    }

    private void check(HttpExchange exchange) throws IOException {
        int atOnce = inFlight.incrementAndGet();
        mostAtOnce.accumulateAndGet(atOnce, Math::max);
        try {
            Thread.sleep(delay.toMillis());
            answerCheck(exchange);
        } catch (IOException | RuntimeException e) {
            JsonAnswer.send(exchange, 500, "{\"errorMessage\":\"" + e + "\"}");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private void answerCheck(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        checks.add(body);
        if (exchange instanceof HttpsExchange secure) {
            callers.add(secure.getSSLSession().getPeerPrincipal().getName());
        }
        String consumer = body.replaceAll("(?s).*\"systemName\"\\s*:\\s*\"([^\"]*)\".*", "$1");
        if (dropped.contains(consumer)) {
            exchange.close();
            return;
        }
        StringBuilder answer = new StringBuilder("{\"consumer\":{\"id\":1,\"systemName\":\"" + consumer
                + "\",\"address\":\"127.0.0.1\",\"port\":1},\"publishers\":[");
        int id = 2;
        for (String publisher : publishers.getOrDefault(consumer, Set.of())) {
            answer.append(id == 2 ? "" : ",").append("{\"id\":").append(id++).append(",\"systemName\":\"")
                    .append(publisher).append("\",\"address\":\"127.0.0.1\",\"port\":1}");
        }
        JsonAnswer.send(exchange, 200, answer.append("]}").toString());
    }

    @Override
    public void close() {
        server.stop(0);
        answering.shutdownNow();
    }
}

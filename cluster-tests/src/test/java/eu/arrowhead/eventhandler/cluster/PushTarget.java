package eu.arrowhead.eventhandler.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * An Arrowhead 4.x push subscriber that can go down (its port closed: connections refused) and come back on the
 * same port. Keeps the payloads it received, in order, and when each came.
 */
final class PushTarget implements AutoCloseable {
    static final String NOTIFY_PATH = "/notify";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final int port;
    private final List<String> payloads = new ArrayList<>();
    /** When each of {@link #payloads} came (nanos). */
    private final List<Long> arrivals = new ArrayList<>();
    private HttpServer server;

    PushTarget() {
        this.server = listen(0);
        this.port = server.getAddress().getPort();
    }

    private HttpServer listen(int onPort) {
        try {
            HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort), 0);
            http.setExecutor(Executors.newSingleThreadExecutor());
            http.createContext(NOTIFY_PATH, exchange -> {
                try (InputStream in = exchange.getRequestBody()) {
                    String payload = JSON.readTree(in.readAllBytes()).get("payload").asText();
                    synchronized (this) {
                        payloads.add(payload);
                        arrivals.add(System.nanoTime());
                    }
                }
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            http.start();
            return http;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JSON of a SubscriptionRequest for this subscriber. */
    String subscription(String systemName, String eventType) {
        return "{\"eventType\":\"" + eventType + "\",\"subscriberSystem\":{\"systemName\":\"" + systemName
                + "\",\"address\":\"127.0.0.1\",\"port\":" + port + "},\"notifyUri\":\"" + NOTIFY_PATH + "\"}";
    }

    /** Subscribes it to {@code eventType} at {@code node}, as an Arrowhead 4.x system does. */
    void subscribeAt(URI node, String systemName, String eventType) throws IOException, InterruptedException {
        HttpResponse<String> subscribed = HTTP.send(HttpRequest.newBuilder(node.resolve("eventhandler/subscribe"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(subscription(systemName, eventType))).build(),
                HttpResponse.BodyHandlers.ofString());
        if (subscribed.statusCode() != 200) {
            throw new AssertionError("subscribe answered " + subscribed.statusCode() + ": " + subscribed.body());
        }
    }

    /** How long after {@code sinceNanos} the first event came that came after it; empty if none did. */
    synchronized Optional<Duration> firstArrivalAfter(long sinceNanos) {
        return arrivals.stream().filter(at -> at - sinceNanos > 0).findFirst()
                .map(at -> Duration.ofNanos(at - sinceNanos));
    }

    /** Closes the port: POSTs to it are refused. */
    synchronized void down() {
        server.stop(0);
    }

    /** Listens on the same port again. */
    synchronized void up() {
        server = listen(port);
    }

    synchronized List<String> payloads() {
        return List.copyOf(payloads);
    }

    /** When each copy of {@code payload} came (nanos), in order. */
    synchronized List<Long> arrivals(String payload) {
        List<Long> at = new ArrayList<>();
        for (int i = 0; i < payloads.size(); i++) {
            if (payloads.get(i).equals(payload)) {
                at.add(arrivals.get(i));
            }
        }
        return at;
    }

    /**
     * The events a push cursor that lets one event at a time be in flight may have had in flight at {@code nanos}:
     * the last whose first copy came before then, if within {@code window} (handed out before, its acknowledgement
     * perhaps not yet kept by the cursor), and the first whose first copy came after (handed out before and still on
     * its way, or the next).
     */
    synchronized List<String> inFlightAround(long nanos, Duration window) {
        Set<String> seen = new HashSet<>();
        List<String> around = new ArrayList<>();
        String lastBefore = null;
        for (int i = 0; i < payloads.size(); i++) {
            String payload = payloads.get(i);
            if (!seen.add(payload)) {
                continue;
            }
            long at = arrivals.get(i);
            if (at - nanos <= 0) {
                lastBefore = nanos - at <= window.toNanos() ? payload : null;
            } else {
                around.add(payload);
                break;
            }
        }
        if (lastBefore != null) {
            around.add(0, lastBefore);
        }
        return around;
    }

    /**
     * The arrivals from a few before the first copy of any of {@code wanted} to a few after its last, each as its
     * payload and its time from {@code originNanos}: what a failure message shows of a push twice.
     */
    synchronized String arrivalsAround(Set<String> wanted, long originNanos) {
        int first = -1;
        int last = -1;
        for (int i = 0; i < payloads.size(); i++) {
            if (wanted.contains(payloads.get(i))) {
                first = first < 0 ? i : first;
                last = i;
            }
        }
        if (first < 0) {
            return "none of " + wanted + " arrived";
        }
        StringBuilder around = new StringBuilder();
        for (int i = Math.max(0, first - 3); i <= Math.min(payloads.size() - 1, last + 3); i++) {
            around.append(i == Math.max(0, first - 3) ? "" : ", ").append(payloads.get(i)).append(" @")
                    .append(Duration.ofNanos(arrivals.get(i) - originNanos).toMillis()).append(" ms");
        }
        return around.toString();
    }

    @Override
    public synchronized void close() {
        server.stop(0);
    }
}

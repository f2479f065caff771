package eu.arrowhead.eventhandler.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * An Arrowhead 4.x push subscriber that can go down (its port closed: connections refused) and come back on the
 * same port. Keeps the payloads it received, in order, and when each came.
 */
final class PushTarget implements AutoCloseable {
    static final String NOTIFY_PATH = "/notify";
    private static final ObjectMapper JSON = new ObjectMapper();

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
     * The events one of which a push cursor that lets one event at a time be in flight had in flight at
     * {@code nanos}, if any: the last whose first copy came before then (handed out before, its acknowledgement
     * perhaps not yet taken), and the first whose first copy came after (handed out before and still on its way,
     * or the next). Either may be lost with a server's acknowledgement and come again.
     */
    synchronized List<String> inFlightAround(long nanos) {
        Set<String> seen = new HashSet<>();
        String lastBefore = null;
        for (int i = 0; i < payloads.size(); i++) {
            String payload = payloads.get(i);
            if (!seen.add(payload)) {
                continue;
            }
            if (arrivals.get(i) - nanos <= 0) {
                lastBefore = payload;
            } else {
                return lastBefore == null ? List.of(payload) : List.of(lastBefore, payload);
            }
        }
        return lastBefore == null ? List.of() : List.of(lastBefore);
    }

    @Override
    public synchronized void close() {
        server.stop(0);
    }
}

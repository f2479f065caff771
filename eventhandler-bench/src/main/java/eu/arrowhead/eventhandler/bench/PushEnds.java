package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import eu.arrowhead.eventhandler.api.PushedEvent;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.http.JsonMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Arrowhead 4.x push subscribers ({@code POST /eventhandler/subscribe}), each a real HTTP server of its own
 * on a free port of 127.0.0.1 to which the Event Handler POSTs every event, and our raw HTTP publisher. A
 * subscriber's clock reads when the POST's body has been read, before its JSON is parsed, as an SSE
 * subscriber's reads when the frame's bytes arrive. Closing unsubscribes every subscriber
 * ({@code DELETE /eventhandler/unsubscribe}), so that runs leave no subscriptions behind.
 */
final class PushEnds implements PublishLoop.Ends {
    private static final String NOTIFY_PATH = "/notify";
    /**
     * Threads that answer the POSTs, shared by all of a loop's subscribers: each has at most one POST in
     * flight and a handler only reads, records and answers, so a few serve a hundred subscribers.
     */
    private static final int HANDLER_THREADS = 4;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final long STOP_MILLIS = 5_000;

    private final String eventType;

    /** @param eventType the loop's event type, which every subscriber subscribes to */
    PushEnds(String eventType) {
        this.eventType = eventType;
    }

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        return subscribeAll(base, List.of(log), live);
    }

    @Override
    public PublishLoop.Subscription subscribeAll(URI base, List<DeliveryLog> logs, Deadline live) {
        Subscribers subscribers = new Subscribers(base);
        try {
            for (DeliveryLog log : logs) {
                live.check();
                subscribers.add(log);
            }
        } catch (RuntimeException e) {
            subscribers.close();
            throw e;
        }
        return subscribers;
    }

    /**
     * Our HTTP publisher, whose ids go unchecked: the 4.x {@code EventDTO} a push subscriber receives carries
     * no id, so only the payload's sequence number tells an event, as with the peers.
     */
    @Override
    public PublishLoop.Publisher publisher(URI base) {
        HttpPublisher publisher = new HttpPublisher(base, false);
        return new PublishLoop.Publisher() {
            @Override
            public long publish(String type, String payload) {
                publisher.publish(type, payload);
                return Sends.NO_ID;
            }

            @Override
            public void close() {
                publisher.close();
            }
        };
    }

    /** A loop's push subscribers: their servers, their handler threads and their subscriptions. */
    private final class Subscribers implements PublishLoop.Subscription {
        private final URI base;
        private final HttpClient client = HttpClient.newBuilder()
                // HTTP/1.1: the server speaks nothing else, so the default's h2c upgrade offer would be wasted.
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(REQUEST_TIMEOUT).build();
        private final ExecutorService handlers = Executors.newFixedThreadPool(HANDLER_THREADS, task -> {
            Thread thread = new Thread(task, "bench-push-subscriber");
            thread.setDaemon(true);
            return thread;
        });
        private final List<HttpServer> servers = new ArrayList<>();
        private final List<String> systemNames = new ArrayList<>();
        private volatile String failure;

        Subscribers(URI base) {
            this.base = base;
        }

        /** Starts a subscriber's server and subscribes it; it is live once the subscribe is answered. */
        void add(DeliveryLog log) {
            HttpServer server;
            try {
                server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            } catch (IOException e) {
                throw new BenchException("cannot start a push subscriber's server: " + e, e);
            }
            server.setExecutor(handlers);
            server.createContext(NOTIFY_PATH, exchange -> receive(exchange, log));
            server.start();
            servers.add(server);
            String systemName = "bench-push-" + servers.size();
            SystemRequest system = new SystemRequest(systemName, "127.0.0.1", server.getAddress().getPort(),
                    null, null);
            byte[] body;
            try {
                body = JsonMapper.get().writeValueAsBytes(new SubscriptionRequest(eventType, system, null,
                        NOTIFY_PATH, false, null, null, null));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            send(HttpRequest.newBuilder(base.resolve("/eventhandler/subscribe"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)), "subscribe " + systemName);
            systemNames.add(systemName);
        }

        /** One POST of the Event Handler: recorded under the log's lock, since handler threads take turns. */
        private void receive(HttpExchange exchange, DeliveryLog log) throws IOException {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                byte[] body = in.readAllBytes();
                long nanos = System.nanoTime();
                try {
                    PushedEvent event = JsonMapper.get().readValue(body, PushedEvent.class);
                    synchronized (log) {
                        log.received(Sends.NO_ID, event.eventType(), event.payload(), nanos);
                    }
                    exchange.sendResponseHeaders(200, -1);
                } catch (IOException | RuntimeException e) {
                    if (failure == null) {
                        failure = "a push subscriber got a POST it cannot take: " + e.getMessage();
                    }
                    exchange.sendResponseHeaders(400, -1);
                }
            }
        }

        private void send(HttpRequest.Builder request, String what) {
            try {
                HttpResponse<String> answer = client.send(request.timeout(REQUEST_TIMEOUT).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() != 200) {
                    throw new BenchException(what + " was answered " + answer.statusCode() + ": " + answer.body());
                }
            } catch (IOException e) {
                throw new BenchException(what + " failed: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted during " + what);
            }
        }

        @Override
        public void checkAlive() {
            String problem = failure;
            if (problem != null) {
                throw new BenchException(problem);
            }
        }

        /**
         * Unsubscribes every subscriber, then stops the servers and waits for their handlers, so that all
         * they recorded is visible to the caller; the first failure to unsubscribe is thrown after the rest.
         */
        @Override
        public void close() {
            RuntimeException first = null;
            for (String systemName : systemNames) {
                try {
                    send(HttpRequest.newBuilder(base.resolve("/eventhandler/unsubscribe?event_type="
                            + URLEncoder.encode(eventType, StandardCharsets.UTF_8) + "&system_name="
                            + URLEncoder.encode(systemName, StandardCharsets.UTF_8))).DELETE(),
                            "unsubscribe " + systemName);
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
            servers.forEach(server -> server.stop(0));
            handlers.shutdown();
            try {
                if (!handlers.awaitTermination(STOP_MILLIS, TimeUnit.MILLISECONDS)) {
                    first = first == null ? new BenchException("the push subscribers' handlers did not stop within "
                            + STOP_MILLIS + " ms") : first;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (first != null) {
                throw first;
            }
        }
    }
}

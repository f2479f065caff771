package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import eu.arrowhead.eventhandler.api.PushedEvent;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * Arrowhead 4.x push subscribers ({@code POST /eventhandler/subscribe}), each a real HTTP server of its own
 * on a free port of 127.0.0.1 to which the Event Handler POSTs every event, and our raw HTTP publisher. A
 * subscriber's clock reads when the POST's body has been read, before its JSON is parsed, as an SSE
 * subscriber's reads when the frame's bytes arrive. Closing unsubscribes every subscriber
 * ({@code DELETE /eventhandler/unsubscribe}), so that runs leave no subscriptions behind.
 *
 * <p>With {@link Tls}, the ends of a secure local cloud: each subscriber is an HTTPS server that requires a
 * client certificate and checks that the one presented is the Event Handler's, and subscribes and unsubscribes
 * with its own certificate, which names it ({@link #systemName}); the publisher publishes with its own and names
 * itself as the events' source.
 */
final class PushEnds implements PublishLoop.Ends {
    private static final String NOTIFY_PATH = "/notify";
    private static final String SYSTEM_NAME_PREFIX = "bench-push-";
    /**
     * Threads that answer the POSTs, shared by all of a loop's subscribers: each has at most one POST in
     * flight and a handler only reads, records and answers, so a few serve a hundred subscribers.
     */
    private static final int HANDLER_THREADS = 4;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final long STOP_MILLIS = 5_000;

    /**
     * Secure mode's certificates.
     *
     * @param pki       the cloud's certificates, with one for each subscriber's {@link #systemName} and for these
     * @param publisher the publisher's system name
     * @param broker    the Event Handler's system name: the certificate each subscriber must be pushed to with
     */
    record Tls(BenchPki pki, String publisher, String broker) {
    }

    /**
     * A subscriber's connections from the Event Handler when its row ends.
     *
     * @param accepted how many the POSTs came on over the row, warm-up included (their distinct client ports)
     * @param open     how many are established now, read from the kernel's table on the subscriber's side
     */
    record Connections(String systemName, int accepted, int open) {
    }

    private final String eventType;
    private final Tls tls;
    /** Told each subscriber's connections as a row ends; null: nobody asks (their count reads a kernel table). */
    private Consumer<List<Connections>> atEnd;

    /** @param eventType the loop's event type, which every subscriber subscribes to */
    PushEnds(String eventType) {
        this(eventType, null);
    }

    /** @param tls secure mode's certificates; {@code null} for plain HTTP */
    PushEnds(String eventType, Tls tls) {
        this.eventType = eventType;
        this.tls = tls;
    }

    /** The system name of a loop's {@code index}-th subscriber, from 1: what its certificate must name. */
    static String systemName(int index) {
        return SYSTEM_NAME_PREFIX + index;
    }

    /**
     * Has {@code census} told, as a row ends (every event delivered, before the subscribers unsubscribe), each
     * subscriber's connections.
     */
    PushEnds atEnd(Consumer<List<Connections>> census) {
        this.atEnd = census;
        return this;
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
        HttpPublisher publisher = tls == null ? new HttpPublisher(base, false)
                : new HttpPublisher(base, tls.pki().context(tls.publisher()), tls.publisher());
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

    /** An HTTP/1.1 client; with {@code context}, it presents that context's certificate. */
    static HttpClient client(SSLContext context) {
        HttpClient.Builder client = HttpClient.newBuilder()
                // HTTP/1.1: the server speaks nothing else, so the default's h2c upgrade offer would be wasted.
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(REQUEST_TIMEOUT);
        return (context == null ? client : client.sslContext(context)).build();
    }

    /** A subscriber's server on a free port of the loopback address; in secure mode it requires a certificate. */
    private HttpServer server(String systemName) throws IOException {
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        if (tls == null) {
            return HttpServer.create(address, 0);
        }
        HttpsServer server = HttpsServer.create(address, 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls.pki().context(systemName)) {
            @Override
            public void configure(HttpsParameters params) {
                // As a 4.x subscriber in secure mode: no certificate, no handshake. (setNeedClientAuth on
                // HttpsParameters alone is not applied; on SSLParameters it is.)
                SSLParameters parameters = getSSLContext().getDefaultSSLParameters();
                parameters.setNeedClientAuth(true);
                params.setSSLParameters(parameters);
            }
        });
        return server;
    }

    /** One subscriber: its server, the client it subscribes with, and the client ports its POSTs came from. */
    private record Subscriber(String systemName, HttpServer server, HttpClient client, Set<Integer> clientPorts) {
    }

    /** A loop's push subscribers: their servers, their handler threads and their subscriptions. */
    private final class Subscribers implements PublishLoop.Subscription {
        private final URI base;
        /** Plain HTTP's one client for every subscriber; in secure mode each has its own, with its certificate. */
        private final HttpClient plainClient = tls == null ? client(null) : null;
        private final ExecutorService handlers = Executors.newFixedThreadPool(HANDLER_THREADS, task -> {
            Thread thread = new Thread(task, "bench-push-subscriber");
            thread.setDaemon(true);
            return thread;
        });
        private final List<Subscriber> subscribers = new ArrayList<>();
        private volatile String failure;

        Subscribers(URI base) {
            this.base = base;
        }

        /** Starts a subscriber's server and subscribes it; it is live once the subscribe is answered. */
        void add(DeliveryLog log) {
            String systemName = systemName(subscribers.size() + 1);
            HttpServer server;
            try {
                server = server(systemName);
            } catch (IOException e) {
                throw new BenchException("cannot start a push subscriber's server: " + e, e);
            }
            Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
            server.setExecutor(handlers);
            server.createContext(NOTIFY_PATH, exchange -> receive(exchange, log, clientPorts));
            server.start();
            HttpClient client = tls == null ? plainClient : client(tls.pki().context(systemName));
            SystemRequest system = new SystemRequest(systemName, "127.0.0.1", server.getAddress().getPort(),
                    null, null);
            byte[] body;
            try {
                body = JsonMapper.get().writeValueAsBytes(new SubscriptionRequest(eventType, system, null,
                        NOTIFY_PATH, false, null, null, null));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            try {
                send(client, HttpRequest.newBuilder(base.resolve("/eventhandler/subscribe"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)), "subscribe " + systemName);
            } catch (RuntimeException e) {
                server.stop(0);
                throw e;
            }
            subscribers.add(new Subscriber(systemName, server, client, clientPorts));
        }

        /** One POST of the Event Handler: recorded under the log's lock, since handler threads take turns. */
        private void receive(HttpExchange exchange, DeliveryLog log, Set<Integer> clientPorts) throws IOException {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                byte[] body = in.readAllBytes();
                long nanos = System.nanoTime();
                if (clientPorts.add(exchange.getRemoteAddress().getPort()) && tls != null) {
                    checkPeer((HttpsExchange) exchange);
                }
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

        /** A new connection: it must have come with the Event Handler's certificate. */
        private void checkPeer(HttpsExchange exchange) {
            String peer;
            try {
                peer = exchange.getSSLSession().getPeerPrincipal().getName();
            } catch (IOException e) {
                peer = "a client without a certificate (" + e.getMessage() + ")";
            }
            if (!peer.startsWith("CN=" + tls.broker() + ".") && failure == null) {
                failure = "a push subscriber got a POST from " + peer + ", not from the Event Handler";
            }
        }

        private void send(HttpClient client, HttpRequest.Builder request, String what) {
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
         * Tells the census, unsubscribes every subscriber, then stops the servers and waits for their handlers,
         * so that all they recorded is visible to the caller; the first failure to unsubscribe is thrown after
         * the rest.
         */
        @Override
        public void close() {
            if (atEnd != null) {
                atEnd.accept(subscribers.stream().map(subscriber -> new Connections(subscriber.systemName(),
                        subscriber.clientPorts().size(),
                        EstablishedConnections.to(subscriber.server().getAddress().getPort()))).toList());
            }
            RuntimeException first = null;
            for (Subscriber subscriber : subscribers) {
                try {
                    String query = "event_type=" + URLEncoder.encode(eventType, StandardCharsets.UTF_8)
                            + "&system_name=" + URLEncoder.encode(subscriber.systemName(), StandardCharsets.UTF_8);
                    send(subscriber.client(), HttpRequest.newBuilder(base.resolve("/eventhandler/unsubscribe?" + query))
                            .DELETE(), "unsubscribe " + subscriber.systemName());
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
            subscribers.forEach(subscriber -> subscriber.server().stop(0));
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

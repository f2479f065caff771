package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Reliability mode push (issue 20, item 3): an Arrowhead 4.x push subscriber that is down while {@code --count}
 * (50 000) events of its type are published into a server in {@code store.mode=sync} on H2, then {@code kill -9},
 * the server started again and the subscriber brought back: it must receive every acknowledged event, in order.
 * A second row kills the server again while the subscriber is catching up: nothing may be lost, and what arrives
 * twice (at least once: a crash can lose up to a second of the cursor's progress) is counted.
 */
final class PushCrash {
    static final String EVENT_TYPE = "reliability.push";
    private static final int DEFAULT_EVENTS = 50_000;
    private static final int BATCH = 1_000;
    private static final Duration DELIVERY_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration POLL = Duration.ofMillis(50);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> COLUMNS = List.of("row", "store mode", "database", "acknowledged", "received",
            "distinct", "lost", "duplicated", "out-of-order", "kills", "delivery s", "events/s after restart");

    private PushCrash() {
    }

    static Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        int events = options.countOr(DEFAULT_EVENTS);
        List<List<Object>> rows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (boolean killWhileCatchingUp : List.of(false, true)) {
            String row = killWhileCatchingUp ? "kill -9 while down, again while catching up" : "kill -9 while down";
            try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-push-")) {
                ServerJvm.Spec spec = new ServerJvm.Spec(options.serverJar(), options.heapOr(null),
                        options.settings(StoreSettings.inMode("sync", StoreSettings.h2(directory))),
                        directory.path(), serverLog);
                rows.add(new Round(row, events, spec).run(killWhileCatchingUp, failures));
            }
        }
        return new Scenario.Result(List.of(new ResultTable("push-crash", COLUMNS, rows)), failures);
    }

    /** One row: a server, a subscriber on a port of its own that is down until the server has been killed. */
    private static final class Round {
        private final String label;
        private final int events;
        private final ServerJvm.Spec spec;
        private final int port = freePort();
        /** Every POST's event number, in arrival order; guarded by itself, as is {@link #arrived}. */
        private final List<Integer> received = new ArrayList<>();
        private final BitSet arrived = new BitSet();

        Round(String label, int events, ServerJvm.Spec spec) {
            this.label = "push " + label;
            this.events = events;
            this.spec = spec;
        }

        List<Object> run(boolean killWhileCatchingUp, List<String> failures) {
            int kills = 0;
            long acknowledged;
            long deliveryNanos;
            try (ServerJvm server = ServerJvm.start(spec)) {
                subscribe(server.baseUri());
                acknowledged = publish(server.baseUri());
                Reliability.say(label, acknowledged + " events acknowledged while the subscriber is down; kill -9");
                server.restart();
                kills++;
                HttpServer subscriber = subscriberUp();
                long back = System.nanoTime();
                try {
                    if (killWhileCatchingUp) {
                        awaitReceived(events / 2);
                        Reliability.say(label, size() + " received; kill -9 while it catches up");
                        server.restart();
                        kills++;
                    }
                    awaitReceived(events);
                    deliveryNanos = System.nanoTime() - back;
                } finally {
                    subscriber.stop(0);
                    ((ExecutorService) subscriber.getExecutor()).shutdownNow();
                }
                server.reportWarnings("the push crash server");
            }
            List<Integer> got;
            synchronized (received) {
                got = List.copyOf(received);
            }
            BitSet seen = new BitSet(events);
            long outOfOrder = 0;
            for (int number : got) {
                // A crash may send a run again from the saved cursor; the first arrivals must still be 0, 1, 2...
                if (!seen.get(number) && number != seen.cardinality()) {
                    outOfOrder++;
                }
                seen.set(number);
            }
            long distinct = seen.cardinality();
            long lost = events - distinct;
            if (lost > 0 || outOfOrder > 0 || got.size() < acknowledged) {
                failures.add(label + ": " + lost + " of " + acknowledged + " acknowledged events never arrived, "
                        + outOfOrder + " out of order");
            }
            if (!killWhileCatchingUp && got.size() != distinct) {
                failures.add(label + ": " + (got.size() - distinct) + " events arrived twice although the subscriber"
                        + " acknowledged none before the kill");
            }
            return Arrays.asList(label, "sync", "H2", acknowledged, got.size(), distinct, lost,
                    got.size() - distinct, outOfOrder, kills, ResultTable.seconds(deliveryNanos),
                    ResultTable.perSecond(got.size(), deliveryNanos));
        }

        private void subscribe(URI base) {
            String body = "{\"eventType\":\"" + EVENT_TYPE + "\",\"subscriberSystem\":{\"systemName\":"
                    + "\"reliability-push\",\"address\":\"127.0.0.1\",\"port\":" + port + "},\"notifyUri\":\"/notify\"}";
            try {
                HttpResponse<String> answer = PushEnds.client(null).send(HttpRequest.newBuilder(
                                base.resolve("/eventhandler/subscribe")).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() != 200) {
                    throw new BenchException(label + ": subscribe answered " + answer.statusCode() + ": " + answer.body());
                }
            } catch (IOException e) {
                throw new BenchException(label + ": subscribe failed: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted", e);
            }
        }

        /** Publishes the events in batches, each payload its number; returns how many were acknowledged. */
        private long publish(URI base) {
            long acknowledged = 0;
            try (HttpPublisher publisher = new HttpPublisher(base, false)) {
                for (int sent = 0; sent < events; sent += BATCH) {
                    List<EventPublishRequest> batch = new ArrayList<>();
                    for (int i = sent; i < Math.min(events, sent + BATCH); i++) {
                        batch.add(EventPublishRequest.of(EVENT_TYPE, Integer.toString(i)));
                    }
                    HttpPublisher.Answer answer = publisher.sendBatch(JsonMapper.get().writeValueAsBytes(batch));
                    if (!answer.accepted()) {
                        throw new BenchException(label + ": a batch was answered " + answer.code() + ": "
                                + answer.refusal());
                    }
                    acknowledged += answer.ids().length;
                }
            } catch (IOException e) {
                throw new BenchException(label + ": publishing failed: " + e, e);
            }
            return acknowledged;
        }

        private HttpServer subscriberUp() {
            HttpServer server;
            try {
                server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
            } catch (IOException e) {
                throw new BenchException(label + ": the subscriber cannot listen on port " + port + ": " + e, e);
            }
            server.setExecutor(Executors.newFixedThreadPool(2));
            server.createContext("/notify", exchange -> {
                try (InputStream in = exchange.getRequestBody()) {
                    JsonNode event = JsonMapper.get().readTree(in.readAllBytes());
                    int number = Integer.parseInt(event.get("payload").asText());
                    synchronized (received) {
                        received.add(number);
                        arrived.set(number);
                    }
                }
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            server.start();
            return server;
        }

        private int size() {
            synchronized (received) {
                return received.size();
            }
        }

        private int distinct() {
            synchronized (received) {
                return arrived.cardinality();
            }
        }

        /** Waits until {@code count} distinct events arrived (duplicates do not count). */
        private void awaitReceived(int count) {
            Deadline deadline = Deadline.in(DELIVERY_TIMEOUT, count + " events at the subscriber");
            if (!deadline.await(() -> distinct() >= count, () -> { }, POLL)) {
                throw new BenchException(label + ": " + size() + " events arrived, not " + count + ", within "
                        + DELIVERY_TIMEOUT.toSeconds() + " s");
            }
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new BenchException("no free port: " + e, e);
        }
    }
}

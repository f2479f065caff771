package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * Scenario secure-push (issue 27): Arrowhead 4.x push to {@value #SUBSCRIBERS} subscribers at a fixed
 * {@value #RATE} events/s, the Event Handler in secure mode beside the same in insecure mode, in one run. In secure
 * mode every system has a certificate of a CA made for the run ({@link BenchPki}): the Event Handler's key store,
 * the publisher's (which publishes as itself), and each subscriber's, an HTTPS server that requires a client
 * certificate, checks that the POSTs come with the Event Handler's, and subscribes with its own.
 *
 * <p>Each mode's server is the runnable jar as a process of its own, as in scenario cpu, so that its CPU time is
 * the whole process's (collections, the JIT, TLS) and none of it the subscribers'; publisher and subscribers run
 * in the bench's JVM, so latency is still read on one clock. Both servers start, each is warmed up with
 * unmeasured push rounds for {@code --warm-up-seconds}, and then their rows run one after the other, the order
 * swapped from one run to the next, so that a slow minute of a shared machine does not always fall on one mode.
 *
 * <p>As each row ends, every event delivered and before the subscribers unsubscribe, it counts the connections
 * from the Event Handler that are established to each subscriber, on the subscriber's side, and reads
 * {@code eventhandler_push_connections} from {@code /metrics}. A table of issue 27's criterion follows.
 */
final class SecurePushScenario {
    /** Settings each mode's server gets from the scenario, which the command line may not override. */
    static final Set<String> ROW_SETTINGS = Set.of("server.ssl.enabled", "server.ssl.key-store",
            "server.ssl.key-store-password", "server.ssl.key-password", "server.ssl.trust-store",
            "server.ssl.trust-store-password");
    static final int SUBSCRIBERS = 5;
    static final int RATE = 200;
    static final String SECURE = "secure";
    static final String INSECURE = "insecure";
    private static final String BROKER = "eventhandler";
    private static final String PUBLISHER = "publisher";
    private static final String EVENT_TYPE = "bench.secure-push";
    private static final String WARM_UP_EVENT_TYPE = "bench.secure-push-warm-up";
    /** Unpaced: a round takes a few seconds, and warms up the code a paced minute runs. */
    private static final int WARM_UP_EVENTS_PER_ROUND = 2000;
    private static final int MAX_OPEN_PER_SUBSCRIBER = 2;
    private static final BigDecimal MAX_P99_RATIO = BigDecimal.valueOf(2);
    private static final String CONNECTIONS_METRIC = "eventhandler_push_connections";
    private static final Duration METRICS_TIMEOUT = Duration.ofSeconds(10);
    private static final String ROW = "row";
    private static final String PROBLEMS = "lost+duplicated+out-of-order";
    private static final String P99 = "p99 ms";
    private static final String OPEN_MAX = "open at end, most to 1 subscriber";
    private static final List<String> COLUMNS = List.of(ROW, "subscribers", "events", "rate/s", "deliveries",
            "lost", "duplicated", "out-of-order", "p50 ms", P99, "max ms", "publish/s", "server CPU ms",
            "server CPU us/event", "connections accepted per subscriber", "open at end per subscriber", OPEN_MAX,
            CONNECTIONS_METRIC, "wall s");
    /** Runs so far in this JVM: an odd one measures the insecure mode first. */
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static BenchPki pki;

    /** One mode's server: its process, where it answers, and how its ends talk to it. */
    private record Server(String mode, ServerJvm process, URI base, PushEnds.Tls tls, TempDirectory directory)
            implements AutoCloseable {

        @Override
        public void close() {
            try (directory) {
                process.close();
            }
        }
    }

    /** What the census of a row's end found. */
    private record Census(List<PushEnds.Connections> connections, Long metric) {
    }

    private SecurePushScenario() {
    }

    static Scenario.Result run(BenchOptions options, int events) {
        BenchPki certificates = pki();
        String logPrefix = ResultWriter.prefix("secure-push", Instant.now());
        List<String> order = RUNS.getAndIncrement() % 2 == 0 ? List.of(SECURE, INSECURE) : List.of(INSECURE, SECURE);
        Map<String, List<Object>> rows = new LinkedHashMap<>();
        List<String> failures = new ArrayList<>();
        try (Server secure = start(SECURE, options, certificates, ResultWriter.serverLog(options.out(), logPrefix, SECURE));
             Server insecure = start(INSECURE, options, null, ResultWriter.serverLog(options.out(), logPrefix, INSECURE))) {
            Map<String, Server> servers = Map.of(SECURE, secure, INSECURE, insecure);
            for (String mode : order) {
                warmUp(servers.get(mode), options.warmUp());
            }
            System.err.println("bench: measuring " + String.join(", then ", order));
            for (String mode : order) {
                Server server = servers.get(mode);
                AtomicReference<Census> census = new AtomicReference<>();
                PushEnds ends = new PushEnds(EVENT_TYPE, server.tls()).atEnd(connections -> census.set(
                        new Census(connections, connectionsMetric(server))));
                PublishLoop.Result loop = new PublishLoop(new Shape(mode, 1, SUBSCRIBERS, events, 0, RATE),
                        server.base(), ends, () -> ProcStatus.read(Long.toString(server.process().pid())).snapshot(),
                        EVENT_TYPE).run();
                rows.put(mode, row(loop, census.get()));
                if (!loop.outcome().clean()) {
                    failures.add(mode + ": " + loop.outcome().problems());
                }
                server.process().reportWarnings("the " + mode + " server");
            }
        }
        ResultTable table = new ResultTable("secure-push", COLUMNS,
                List.of(rows.get(SECURE), rows.get(INSECURE)));
        return new Scenario.Result(List.of(table, criterion(table)), failures);
    }

    /** The certificates, made once per JVM (keytool takes seconds) and removed at its exit. */
    private static synchronized BenchPki pki() {
        if (pki == null) {
            List<String> systems = new ArrayList<>(List.of(BROKER, PUBLISHER));
            IntStream.rangeClosed(1, SUBSCRIBERS).mapToObj(PushEnds::systemName).forEach(systems::add);
            System.err.println("bench: making a CA and certificates for " + systems + " with keytool");
            BenchPki made = BenchPki.create(systems);
            Runtime.getRuntime().addShutdownHook(new Thread(made::close, "bench-pki-remover"));
            pki = made;
        }
        return pki;
    }

    /** Starts a mode's server on an empty event store; {@code certificates} null: insecure. */
    private static Server start(String mode, BenchOptions options, BenchPki certificates, Path log) {
        Map<String, String> settings = new LinkedHashMap<>(options.overrides());
        if (certificates != null) {
            settings.putAll(certificates.serverSettings(BROKER));
        }
        TempDirectory directory = TempDirectory.create("eventhandler-bench-secure-push-");
        try {
            ServerJvm process = ServerJvm.start(new ServerJvm.Spec(ServerJvm.jar(), null, settings, directory.path(),
                    log));
            // ServerJvm reads the port from the log line, which does not say the scheme.
            URI base = certificates == null ? process.baseUri()
                    : URI.create("https://127.0.0.1:" + process.baseUri().getPort());
            System.err.println("bench: " + mode + " server process " + process.pid() + " at " + base
                    + "; its output goes to " + log);
            return new Server(mode, process, base, certificates == null ? null
                    : new PushEnds.Tls(certificates, PUBLISHER, BROKER), directory);
        } catch (RuntimeException e) {
            directory.close();
            throw e;
        }
    }

    /** Unmeasured push rounds to the server's JIT's taste, on an event type of their own. */
    private static void warmUp(Server server, Duration length) {
        System.err.println("bench: warming up the " + server.mode() + " server for " + length.toSeconds()
                + " s (not measured)");
        Deadline warm = Deadline.in(length, "the warm-up");
        Shape shape = Shape.of(server.mode() + "-warm-up", 1, SUBSCRIBERS, WARM_UP_EVENTS_PER_ROUND);
        for (int round = 0; round == 0 || !warm.passed(); round++) {
            new PublishLoop(shape, server.base(), new PushEnds(WARM_UP_EVENT_TYPE, server.tls()),
                    () -> ResourceSnapshot.UNKNOWN, WARM_UP_EVENT_TYPE).run();
        }
    }

    /**
     * {@value #CONNECTIONS_METRIC} from the server's {@code /metrics}, which in secure mode takes any certificate
     * of the cloud (the publisher's here); null if it does not answer.
     */
    private static Long connectionsMetric(Server server) {
        HttpClient client = PushEnds.client(server.tls() == null ? null : server.tls().pki().context(PUBLISHER));
        try {
            HttpResponse<String> page = client.send(HttpRequest.newBuilder(server.base().resolve("/metrics"))
                    .timeout(METRICS_TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
            return page.statusCode() == 200 ? MetricsPage.parse(page.body()).value(CONNECTIONS_METRIC) : null;
        } catch (IOException e) {
            System.err.println("bench: the " + server.mode() + " server's /metrics did not answer: " + e);
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while reading /metrics", e);
        }
    }

    private static List<Object> row(PublishLoop.Result loop, Census census) {
        DeliveryLog.Outcome outcome = loop.outcome();
        LatencyStats latency = LatencyStats.of(outcome.latencyNanos());
        List<PushEnds.Connections> connections = census == null ? List.of() : census.connections();
        return new PlottedRow(loop.label(), Arrays.asList(loop.label(), loop.shape().subscribers(), loop.events(),
                loop.shape().ratePerSecond(), outcome.events(), outcome.lost(), outcome.duplicated(),
                outcome.outOfOrder(), latency.p50(), latency.p99(), latency.max(), loop.publishRate(),
                loop.after().cpuMillisSince(loop.before()), loop.cpuMicrosPerEvent(),
                join(connections.stream().map(PushEnds.Connections::accepted).toList()),
                join(connections.stream().map(PushEnds.Connections::open).toList()),
                connections.stream().mapToLong(PushEnds.Connections::open).max().orElse(-1),
                census == null ? null : census.metric(), ResultTable.seconds(loop.wallNanos())), outcome);
    }

    private static String join(List<Integer> counts) {
        return String.join(" ", counts.stream().map(String::valueOf).toList());
    }

    /**
     * Issue 27's criterion judged on {@code figures}, this scenario's table (or the medians of several): every
     * event once and in order in both modes, at most {@value #MAX_OPEN_PER_SUBSCRIBER} connections open to any
     * subscriber at the end, and the secure p99 at most {@link #MAX_P99_RATIO} times the insecure one.
     */
    static ResultTable criterion(ResultTable figures) {
        BigDecimal problems = cell(figures, SECURE, "lost").add(cell(figures, SECURE, "duplicated"))
                .add(cell(figures, SECURE, "out-of-order")).add(cell(figures, INSECURE, "lost"))
                .add(cell(figures, INSECURE, "duplicated")).add(cell(figures, INSECURE, "out-of-order"));
        BigDecimal open = cell(figures, SECURE, OPEN_MAX).max(cell(figures, INSECURE, OPEN_MAX));
        BigDecimal ratio = cell(figures, SECURE, P99).divide(cell(figures, INSECURE, P99), 2, RoundingMode.HALF_UP);
        List<List<Object>> rows = List.of(
                judged("every event once, in order (both modes): " + PROBLEMS, problems, BigDecimal.ZERO),
                judged("connections open to one subscriber at the end (most, both modes)", open,
                        BigDecimal.valueOf(MAX_OPEN_PER_SUBSCRIBER)),
                judged("push p99, secure / insecure", ratio, MAX_P99_RATIO));
        return new ResultTable("secure-push-criterion", List.of("criterion", "measured", "limit", "held?"), rows);
    }

    private static List<Object> judged(String criterion, BigDecimal measured, BigDecimal limit) {
        return Arrays.asList(criterion, measured, limit, measured.compareTo(limit) <= 0 ? "held" : "missed");
    }

    /** A number of the row {@code mode}; a missing one (no census) counts as failing. */
    private static BigDecimal cell(ResultTable table, String mode, String column) {
        int index = table.columns().indexOf(column);
        Object value = table.rows().stream().filter(row -> mode.equals(row.get(0))).findFirst()
                .map(row -> row.get(index)).orElse(null);
        if (value instanceof BigDecimal decimal) {
            return decimal;
        }
        return value instanceof Number number ? BigDecimal.valueOf(number.longValue()) : BigDecimal.valueOf(1_000_000);
    }

    /** The tables of several runs as one: the medians of the figures, and the criterion judged on those. */
    static List<ResultTable> medians(List<List<ResultTable>> runs) {
        ResultTable figures = ResultTable.medians(runs.stream().map(tables -> tables.subList(0, 1)).toList()).get(0);
        return List.of(figures, criterion(figures));
    }
}

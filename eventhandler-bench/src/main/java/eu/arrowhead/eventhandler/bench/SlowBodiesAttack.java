package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * Reliability mode bodies (issue 12, finding 10): twice {@code server.worker-threads} connections send a
 * publish whose body arrives a byte a second. A server that holds reads such bodies without holding a
 * worker each (or gives up on them soon with a 408), so that echo, mgmt/health and a normal publish are
 * answered at once meanwhile; and it refuses a {@code Content-Length} over its limit with a 413 before the
 * body comes. The mode times those requests while the bodies trickle, and watches what the trickling
 * connections finally get, for {@code --seconds}.
 */
final class SlowBodiesAttack {
    static final String EVENT_TYPE = "reliability.bodies";
    private static final int DEFAULT_SECONDS = 120;
    /** Longer than anyone waits: the body is still arriving when the watch ends. */
    private static final int TRICKLED_BODY_BYTES = 4096;
    private static final int LARGE_PAYLOAD_CHARS = 20_000;
    /** 100 MiB: far over the default publish.max-request-bytes of 1 MiB. */
    private static final long OVERSIZED_CONTENT_LENGTH = 100L << 20;
    /** How long the bodies trickle before the other requests are timed: every worker has one by then. */
    private static final Duration TRICKLE_BEFORE_PROBES = Duration.ofSeconds(5);
    private static final Duration TICK = Duration.ofSeconds(1);
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);
    /** What "at once" means here, with room for a loaded 2-core machine. */
    private static final Duration FAST = Duration.ofSeconds(5);
    private static final List<String> COLUMNS = List.of("worker threads", "trickling connections",
            "declared body bytes", "seconds watched", "store mode");
    private static final List<String> PROBE_COLUMNS = List.of("request while bodies trickle", "status", "seconds",
            "answer");
    private static final List<String> TRICKLER_COLUMNS = List.of("trickling connection got", "connections",
            "body bytes sent (least)", "first after s", "last after s");

    private SlowBodiesAttack() {
    }

    static Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        int workers = options.workerThreads();
        int count = options.countOr(2 * workers);
        Duration window = Duration.ofSeconds(options.secondsOr(DEFAULT_SECONDS));
        List<String> failures = new ArrayList<>();
        ExecutorService probeThreads = Executors.newCachedThreadPool();
        try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-bodies-")) {
            Map<String, String> own = new LinkedHashMap<>(StoreSettings.inMode("async", StoreSettings.h2(directory)));
            own.put("server.worker-threads", Integer.toString(workers));
            Map<String, String> settings = options.settings(own);
            try (ServerJvm server = ServerJvm.start(new ServerJvm.Spec(options.serverJar(), options.heapOr(null),
                    settings, directory.path(), serverLog));
                 TricklingBodies tricklers = TricklingBodies.open(address(server.baseUri()), count,
                         trickledBody(), Deadline.in(Duration.ofSeconds(30), count + " connections"))) {
                Reliability.say("bodies", "server pid " + server.pid() + " at " + server.baseUri() + " with "
                        + workers + " worker threads; " + count + " connections trickle a body a byte a second");
                Deadline watch = Deadline.in(window, "the trickling bodies' answers");
                tick(tricklers, Deadline.in(TRICKLE_BEFORE_PROBES, "the trickle's start"));
                Reliability.say("bodies", "timing echo, mgmt/health, publishes and an oversized Content-Length");
                Map<String, CompletableFuture<HttpProbe.Answer>> probes = probes(server.baseUri(), window,
                        probeThreads);
                watch(tricklers, probes, watch);
                List<List<Object>> probeRows = new ArrayList<>();
                probes.forEach((request, future) -> {
                    HttpProbe.Answer answer = future.join();
                    probeRows.add(Arrays.asList(request, answer.answered() ? answer.status() : null,
                            ResultTable.seconds(answer.nanos()), Reliability.shorten(answer.body())));
                    judge(request, answer, failures);
                });
                tricklers.counts().forEach((outcome, connections) -> {
                    if (outcome.startsWith("answered 5") || outcome.startsWith("no answer")) {
                        failures.add(connections + " trickling connections got " + outcome + " within "
                                + window.toSeconds() + " s");
                    }
                });
                List<Object> row = List.of(workers, count, TRICKLED_BODY_BYTES, window.toSeconds(),
                        settings.get("store.mode"));
                return new Scenario.Result(List.of(new ResultTable("bodies", COLUMNS, List.of(row)),
                        new ResultTable("bodies-probes", PROBE_COLUMNS, probeRows),
                        new ResultTable("bodies-tricklers", TRICKLER_COLUMNS, tricklers.outcomes())), failures);
            }
        } finally {
            probeThreads.shutdownNow();
        }
    }

    /** The requests to time, started at once, each on a thread of its own, each waiting up to {@code window}. */
    private static Map<String, CompletableFuture<HttpProbe.Answer>> probes(URI base, Duration window,
                                                                           ExecutorService threads) {
        URI publish = base.resolve("/eventhandler/publish");
        Map<String, Supplier<HttpProbe.Answer>> requests = new LinkedHashMap<>();
        requests.put("GET echo", () -> HttpProbe.get(base.resolve("/eventhandler/echo"), window));
        requests.put("GET mgmt/health", () -> HttpProbe.get(base.resolve("/eventhandler/mgmt/health"), window));
        requests.put("POST publish (small)", () -> HttpProbe.postJson(publish,
                HttpPublisher.body(EVENT_TYPE, "small"), window));
        requests.put("POST publish (20 KB)", () -> HttpProbe.postJson(publish,
                HttpPublisher.body(EVENT_TYPE, "x".repeat(LARGE_PAYLOAD_CHARS)), window));
        requests.put("POST publish, Content-Length " + OVERSIZED_CONTENT_LENGTH + ", no body",
                () -> TricklingBodies.declaredOnly(address(base), OVERSIZED_CONTENT_LENGTH, window));
        Map<String, CompletableFuture<HttpProbe.Answer>> started = new LinkedHashMap<>();
        requests.forEach((name, request) -> started.put(name, CompletableFuture.supplyAsync(request, threads)));
        return started;
    }

    /**
     * Trickles on until every trickling connection and every timed request has its answer, or the watch
     * ends; a progress line every {@link #PROGRESS_EVERY}.
     */
    private static void watch(TricklingBodies tricklers, Map<String, CompletableFuture<HttpProbe.Answer>> probes,
                              Deadline watch) {
        long[] nextLine = {System.nanoTime()};
        watch.await(() -> tricklers.allDecided() && probes.values().stream().allMatch(CompletableFuture::isDone),
                () -> {
                    tricklers.tick();
                    if (System.nanoTime() - nextLine[0] >= 0) {
                        nextLine[0] += PROGRESS_EVERY.toNanos();
                        Reliability.say("bodies", "trickling connections: " + tricklers.counts()
                                + "; timed requests answered: "
                                + probes.values().stream().filter(CompletableFuture::isDone).count() + " of "
                                + probes.size());
                    }
                }, TICK);
    }

    /** A request answered as it should be, and fast; the oversized one with a 413. */
    private static void judge(String request, HttpProbe.Answer answer, List<String> failures) {
        int expected = request.contains("Content-Length") ? 413 : 200;
        if (answer.status() != expected || answer.nanos() > FAST.toNanos()) {
            failures.add(request + " while the bodies trickled: " + answer.summary() + " after "
                    + ResultTable.seconds(answer.nanos()) + " s (expected " + expected + " within " + FAST.toSeconds()
                    + " s)");
        }
    }

    private static void tick(TricklingBodies tricklers, Deadline until) {
        until.await(() -> false, tricklers::tick, TICK);
    }

    /** A valid publish body, padded to {@value #TRICKLED_BODY_BYTES} bytes: it never arrives whole. */
    private static byte[] trickledBody() {
        byte[] start = HttpPublisher.body(EVENT_TYPE, "");
        return HttpPublisher.body(EVENT_TYPE, "x".repeat(TRICKLED_BODY_BYTES - start.length));
    }

    private static InetSocketAddress address(URI base) {
        return new InetSocketAddress(base.getHost(), base.getPort());
    }
}

package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario cluster (issue 14): cluster mode against single-node mode in one run.
 * <ul>
 *   <li>Latency: A (1 publisher, 1 subscriber) and B (1 publisher, {@value #B_SUBSCRIBERS} subscribers) on a
 *       single node (the packed defaults), then on a cluster of 3 nodes over 3 clustered NATS servers (the stream
 *       with 3 replicas), with the subscribers on the publisher's node and on another node.</li>
 *   <li>One publisher's rate ({@link PublisherRate}) on the single node and on the cluster's first node.</li>
 *   <li>What a node reads ({@link ClusterReadRows}): its CPU per event of a type its subscribers do not want.</li>
 *   <li>Fan-out capacity: 1 node against 3, each node held to {@code --cpu-quota} of a core by a cgroup (NATS
 *       is not held, and each node is first warmed up under this load until its JIT compilers are nearly idle),
 *       {@code --subscribers} SSE subscribers spread evenly over the nodes and one publisher at a fixed pace,
 *       its events to each node in turn, raised by half each step of {@code --step-seconds} until a pace does not
 *       hold (the p99 passes {@value #P99_LIMIT_MS} ms or an event is lost, twice at the same pace), then narrowed
 *       down by halves to within {@value #CAPACITY_PRECISION_PERCENT}%: the fastest pace that held, in deliveries
 *       per second. Few subscribers per node keep each event's burst of writes short: a node that
 *       spends its quota on one event waits for the next period, and 300 writes at 0.25 core broke the p99 at
 *       any pace.</li>
 * </ul>
 * CPU is utime + stime from {@code /proc/PID/stat} of the Event Handler processes and, in the cluster's rows, of
 * the NATS servers too, each given per event.
 */
final class ClusterScenario {
    static final int B_SUBSCRIBERS = 6;
    static final int P99_LIMIT_MS = 50;
    private static final int FIRST_RATE = 20;
    /** A pace is given a second try before it counts as not held: one burst of a cgroup's throttling is noise. */
    private static final int TRIES = 2;
    private static final int MAX_RATE = 50_000;
    /** The capacity search ends when the last pace that held is this close to the first that did not. */
    private static final int CAPACITY_PRECISION_PERCENT = 5;
    /** Events of one round of the capacity warm-up. */
    private static final int CAPACITY_WARM_UP_EVENTS = 3_000;
    /**
     * The capacity warm-up ends after {@link #QUIET_ROUNDS} rounds in a row in which no node compiled more than
     * this many methods: the counts bounce from round to round (55, 51, 25, 23, 39, 28, 10 on 3 nodes).
     */
    private static final int QUIET_COMPILES_PER_ROUND = 20;
    private static final int QUIET_ROUNDS = 2;
    /** The warm-ups took 10-15 rounds, 2-3 minutes; one that never quiets is said, and the rows measured anyway. */
    private static final Duration CAPACITY_WARM_UP_LIMIT = Duration.ofMinutes(5);
    private static final List<String> LATENCY_COLUMNS = List.of("row", "set-up", "subscribers", "events",
            "deliveries", "lost", "duplicated", "out-of-order", "wrong-id", "p50 ms", "p99 ms", "max ms", "publish/s",
            "EH CPU us/event", "EH+NATS CPU us/event", "wall s");
    private static final List<String> CAPACITY_COLUMNS = List.of("nodes", "events/s asked", "subscribers",
            "deliveries/s", "lost", "duplicated", "out-of-order", "p50 ms", "p99 ms", "max ms", "held",
            "EH CPU us/delivery", "machine busy %");
    private static final List<String> SUMMARY_COLUMNS = List.of("measure", "value", "target", "met");

    private ClusterScenario() {
    }

    static Scenario.Result run(BenchOptions options, int events) {
        BenchOptions.ClusterOptions cluster = options.cluster();
        String prefix = ResultWriter.prefix("cluster", Instant.now());
        try {
            Files.createDirectories(options.out());
        } catch (IOException e) {
            throw new BenchException("cannot create the result directory " + options.out() + ": " + e, e);
        }
        List<List<Object>> latency = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        Map<String, BigDecimal> p50s = new LinkedHashMap<>();
        List<List<Object>> publisherRates = new ArrayList<>();
        List<BigDecimal> singleRates;
        List<BigDecimal> clusterRates;
        List<List<Object>> reads;

        System.err.println("bench: cluster: single node (the packed defaults)");
        try (TempDirectory directory = TempDirectory.create("eventhandler-bench-cluster-");
             ServerJvm single = ServerJvm.start(new ServerJvm.Spec(ServerJvm.jar(), null, options.overrides(),
                     directory.path(), options.out().resolve(prefix + "-single.log")))) {
            JitWarmUp.run(single.baseUri(), options.warmUp());
            Processes eh = new Processes(List.of(single.pid()));
            latencyRows("single node", List.of(single.baseUri()), List.of(single.baseUri()), eh, Processes.NONE,
                    events, latency, failures, p50s);
            singleRates = PublisherRate.rows("single node", single.baseUri(), events, eh::cpuNanos, eh::cpuNanos,
                    publisherRates);
        }
        System.err.println("bench: cluster: 3 nodes, 3 NATS servers, stream with 3 replicas");
        try (Cluster three = Cluster.start(options, prefix, 3, null)) {
            latencyRows("cluster, same node", List.of(three.uris.get(0)), List.of(three.uris.get(0)), three.nodes,
                    three.nats, events, latency, failures, p50s);
            latencyRows("cluster, across nodes", List.of(three.uris.get(0)), List.of(three.uris.get(2)), three.nodes,
                    three.nats, events, latency, failures, p50s);
            clusterRates = PublisherRate.rows("cluster of 3", three.uris.get(0), events, three.nodes::cpuNanos,
                    () -> three.nodes.cpuNanos() + three.nats.cpuNanos(), publisherRates);
            System.err.println("bench: cluster: what a node reads of the events none of its subscribers wants");
            reads = ClusterReadRows.run(three.uris, three.servers.get(1).pid(), events, failures);
        }
        List<List<Object>> capacity = new ArrayList<>();
        Map<Integer, Long> held = new LinkedHashMap<>();
        for (int nodes : List.of(1, 3)) {
            System.err.println("bench: cluster: fan-out capacity with " + nodes + " node(s) at " + cluster.cpuQuota()
                    + " core each, " + cluster.subscribers() + " subscribers");
            try (Cluster c = Cluster.start(options, prefix, nodes, cluster)) {
                held.put(nodes, capacity(c, cluster, capacity));
            }
        }
        ResultTable summary = summary(p50s, singleRates, clusterRates, held);
        return new Scenario.Result(List.of(new ResultTable("cluster-latency", LATENCY_COLUMNS, latency),
                new ResultTable("cluster-publisher-rate", PublisherRate.COLUMNS, publisherRates),
                new ResultTable("cluster-reads", ClusterReadRows.COLUMNS, reads),
                new ResultTable("cluster-capacity", CAPACITY_COLUMNS, capacity), summary), failures);
    }

    /** Rows A and B with the publisher on {@code publishTo} and the subscribers on {@code subscribeAt}. */
    private static void latencyRows(String setUp, List<URI> publishTo, List<URI> subscribeAt, Processes eh,
                                    Processes nats, int events, List<List<Object>> rows, List<String> failures,
                                    Map<String, BigDecimal> p50s) {
        for (Shape shape : List.of(Shape.of("A", 1, 1, events), Shape.of("B", 1, B_SUBSCRIBERS, events))) {
            String label = shape.label() + " " + setUp;
            Reading reading = new Reading(eh, nats);
            PublishLoop.Result loop = new PublishLoop(shape.labelled(label), publishTo.get(0),
                    new NodeEnds(new RawHttpEnds(false), publishTo, subscribeAt), reading::snapshot).run();
            DeliveryLog.Outcome outcome = loop.outcome();
            LatencyStats stats = LatencyStats.of(outcome.latencyNanos());
            p50s.put(label, stats.p50());
            rows.add(new PlottedRow(label, Arrays.asList(shape.label(), setUp, shape.subscribers(), loop.events(),
                    outcome.events(), outcome.lost(), outcome.duplicated(), outcome.outOfOrder(), outcome.wrongId(),
                    stats.p50(), stats.p99(), stats.max(), loop.publishRate(),
                    reading.ehMicrosPerEvent(loop.events()), loop.cpuMicrosPerEvent(),
                    ResultTable.seconds(loop.wallNanos())), outcome));
            if (!outcome.clean()) {
                failures.add(label + ": " + outcome.problems());
            }
            System.err.println("bench: " + label + ": p50 " + stats.p50() + " ms, p99 " + stats.p99() + " ms");
        }
    }

    /**
     * Raises the pace by half until one does not hold, then halves the interval between the last pace that held
     * and the first that did not until it is within {@value #CAPACITY_PRECISION_PERCENT}% of the latter; returns
     * the deliveries per second of the fastest pace that held. Steps of half alone left the true limit anywhere
     * within a factor of 1.5 (3 nodes held 337 events/s and not 505), more than the target's margin.
     */
    private static long capacity(Cluster cluster, BenchOptions.ClusterOptions options, List<List<Object>> rows) {
        int held = 0;
        int failed = 0;
        int rate = FIRST_RATE;
        while (rate <= MAX_RATE) {
            if (holds(cluster, options, rate, rows)) {
                held = rate;
            } else {
                failed = rate;
            }
            if (failed == 0) {
                rate = rate * 3 / 2;
                continue;
            }
            if (held == 0) {
                break; // not even the first pace held: nothing to narrow down
            }
            int between = (held + failed) / 2;
            if ((failed - held) * 100L <= (long) failed * CAPACITY_PRECISION_PERCENT || between == held) {
                break;
            }
            rate = between;
        }
        return (long) held * options.subscribers();
    }

    /** Whether the pace holds, at its first or second try; a row for each try. */
    private static boolean holds(Cluster cluster, BenchOptions.ClusterOptions options, int rate,
                                 List<List<Object>> rows) {
        int nodes = cluster.uris.size();
        for (int tries = 1; ; tries++) {
            // One paced publisher whose events go to each node in turn.
            Shape shape = new Shape("capacity-" + nodes + "-nodes-" + rate, 1, options.subscribers(),
                    rate * options.stepSeconds(), 0, rate);
            Reading reading = new Reading(cluster.nodes, Processes.NONE);
            PublishLoop.Result loop = new PublishLoop(shape, cluster.uris.get(0),
                    new NodeEnds(new RawHttpEnds(false), cluster.uris, cluster.uris), reading::snapshot).run();
            DeliveryLog.Outcome outcome = loop.outcome();
            LatencyStats stats = LatencyStats.of(outcome.latencyNanos());
            boolean holds = outcome.clean() && stats.p99() != null
                    && stats.p99().compareTo(BigDecimal.valueOf(P99_LIMIT_MS)) < 0;
            rows.add(Arrays.asList(nodes, rate, options.subscribers(), (long) rate * options.subscribers(),
                    outcome.lost(), outcome.duplicated(), outcome.outOfOrder(), stats.p50(), stats.p99(),
                    stats.max(), holds ? "yes" : "no", reading.ehMicrosPerEvent(outcome.events()),
                    reading.machineBusyPercent()));
            System.err.println("bench: " + nodes + " node(s), " + rate + " events/s to "
                    + options.subscribers() + " subscribers: p99 " + stats.p99() + " ms, " + outcome.problems()
                    + (holds ? "" : tries < TRIES ? ": trying this pace once more" : ": does not hold"));
            if (holds || tries >= TRIES) {
                return holds;
            }
        }
    }

    private static ResultTable summary(Map<String, BigDecimal> p50s, List<BigDecimal> singleRates,
                                       List<BigDecimal> clusterRates, Map<Integer, Long> held) {
        List<List<Object>> rows = new ArrayList<>();
        BigDecimal latencyTarget = new BigDecimal("0.5");
        for (String shape : List.of("A", "B")) {
            BigDecimal single = p50s.get(shape + " single node");
            BigDecimal across = p50s.get(shape + " cluster, across nodes");
            BigDecimal difference = single == null || across == null ? null : across.subtract(single);
            rows.add(Arrays.asList(shape + ": cross-node p50 - single-node p50 (ms)", difference, "<= 0.5",
                    difference == null ? "n/a" : difference.compareTo(latencyTarget) <= 0 ? "yes" : "no"));
        }
        BigDecimal rateTarget = new BigDecimal("0.8");
        for (PublisherRate.Kind kind : PublisherRate.Kind.values()) {
            BigDecimal ratio = clusterRates.get(kind.ordinal()).divide(singleRates.get(kind.ordinal()), 2,
                    RoundingMode.HALF_UP);
            rows.add(Arrays.asList("one publisher's events/s, cluster / single node: " + kind.label, ratio, ">= 0.8",
                    ratio.compareTo(rateTarget) >= 0 ? "yes" : "no"));
        }
        long one = held.getOrDefault(1, 0L);
        long three = held.getOrDefault(3, 0L);
        BigDecimal ratio = one == 0 ? null : BigDecimal.valueOf(three).divide(BigDecimal.valueOf(one), 2,
                RoundingMode.HALF_UP);
        rows.add(Arrays.asList("fan-out deliveries/s at p99 < " + P99_LIMIT_MS + " ms, 1 node", one, "", ""));
        rows.add(Arrays.asList("fan-out deliveries/s at p99 < " + P99_LIMIT_MS + " ms, 3 nodes", three, "", ""));
        rows.add(Arrays.asList("3 nodes / 1 node", ratio, ">= 2.5",
                ratio == null ? "n/a" : ratio.compareTo(BigDecimal.valueOf(2.5)) >= 0 ? "yes" : "no"));
        return new ResultTable("cluster-targets", SUMMARY_COLUMNS, rows);
    }

    /** Processes whose CPU time is summed. */
    private record Processes(List<Long> pids) {
        static final Processes NONE = new Processes(List.of());

        long cpuNanos() {
            long sum = 0;
            for (long pid : pids) {
                Long nanos = ProcStatus.read(Long.toString(pid)).snapshot().cpuNanos();
                sum += nanos == null ? 0 : nanos;
            }
            return sum;
        }
    }

    /**
     * The CPU time a loop reads before and after its measured events: Event Handler and NATS together, as the
     * loop's own figure, and the Event Handler's alone, kept here.
     */
    private static final class Reading {
        private final Processes eh;
        private final Processes nats;
        private final List<Long> ehNanos = new ArrayList<>();
        private final List<MachineCpu> machine = new ArrayList<>();

        Reading(Processes eh, Processes nats) {
            this.eh = eh;
            this.nats = nats;
        }

        ResourceSnapshot snapshot() {
            long ours = eh.cpuNanos();
            ehNanos.add(ours);
            machine.add(MachineCpu.read());
            return new ResourceSnapshot(null, null, null, null, ours + nats.cpuNanos());
        }

        /** How busy all of the machine's cores were between the last two snapshots. */
        BigDecimal machineBusyPercent() {
            return machine.size() < 2 ? null
                    : machine.get(machine.size() - 1).busyPercentSince(machine.get(machine.size() - 2));
        }

        BigDecimal ehMicrosPerEvent(long count) {
            if (ehNanos.size() < 2 || count <= 0) {
                return null;
            }
            long nanos = ehNanos.get(ehNanos.size() - 1) - ehNanos.get(ehNanos.size() - 2);
            return BigDecimal.valueOf(nanos / 1e3 / count).setScale(1, RoundingMode.HALF_UP);
        }
    }

    /** NATS servers and Event Handler nodes on them, each node warmed up and then, if asked, held to a quota. */
    private static final class Cluster implements AutoCloseable {
        private final TempDirectory directory;
        private final NatsServers natsServers;
        private final List<ServerJvm> servers = new ArrayList<>();
        private final List<CpuQuota> quotas = new ArrayList<>();
        final List<URI> uris = new ArrayList<>();
        Processes nodes;
        Processes nats;

        private Cluster(TempDirectory directory, NatsServers natsServers) {
            this.directory = directory;
            this.natsServers = natsServers;
        }

        /**
         * Starts the NATS servers and the nodes, and warms each node up. With {@code capacity}, the nodes are then
         * warmed up under the capacity rows' load and held to its quota.
         */
        static Cluster start(BenchOptions options, String prefix, int nodeCount,
                             BenchOptions.ClusterOptions capacity) {
            TempDirectory directory = TempDirectory.create("eventhandler-bench-cluster-");
            Cluster cluster = null;
            try {
                cluster = new Cluster(directory, NatsServers.start(directory.path()));
                List<Long> pids = new ArrayList<>();
                for (int i = 0; i < nodeCount; i++) {
                    Map<String, String> settings = new LinkedHashMap<>(options.overrides());
                    settings.put("cluster.enabled", "true");
                    settings.put("cluster.nats-urls", cluster.natsServers.urls());
                    settings.put("cluster.replicas", "3");
                    settings.put("cluster.node-name", "bench-" + i);
                    Path node = Files.createDirectories(directory.path().resolve("node-" + i));
                    ServerJvm server = ServerJvm.start(new ServerJvm.Spec(ServerJvm.jar(), null, settings, node,
                            options.out().resolve(prefix + "-" + nodeCount + "-nodes-" + i + ".log")));
                    cluster.servers.add(server);
                    cluster.uris.add(server.baseUri());
                    pids.add(server.pid());
                }
                cluster.nodes = new Processes(pids);
                cluster.nats = new Processes(cluster.natsServers.pids());
                for (int i = 0; i < nodeCount; i++) {
                    JitWarmUp.run(cluster.uris.get(i), options.warmUp());
                }
                if (capacity != null) {
                    cluster.warmUpForCapacity(capacity.subscribers());
                    for (int i = 0; i < nodeCount; i++) {
                        cluster.quotas.add(CpuQuota.hold("eventhandler-bench-node-" + i, pids.get(i),
                                capacity.cpuQuota()));
                    }
                }
                return cluster;
            } catch (IOException | RuntimeException e) {
                if (cluster != null) {
                    cluster.close();
                } else {
                    directory.close();
                }
                throw e instanceof RuntimeException runtime ? runtime
                        : new BenchException("cannot set up the cluster's directories: " + e, e);
            }
        }

        /**
         * Publishes as the capacity rows do (their subscribers spread over the nodes, the events to each node in
         * turn), unpaced and before any quota, until a round leaves the nodes' JIT compilers almost idle. The
         * general warm-up does not reach the code of a node writing each event to dozens of subscribers: in the
         * first runs the nodes compiled some 900 methods (1 node) and 2 500 (each of 3 nodes) in 40 s of the
         * capacity rows, and their compiler threads took 40-56% of each node's quota, at random moments, which
         * turned a pace's p99 into a lottery (1 node failed 20 events/s once and then held 150).
         */
        private void warmUpForCapacity(int subscribers) {
            Deadline deadline = Deadline.in(CAPACITY_WARM_UP_LIMIT, "the capacity warm-up");
            long[] compiled = JitActivity.totalCompiles(nodes.pids());
            int quietRounds = 0;
            for (int round = 1; ; round++) {
                PublishLoop.Result loop = new PublishLoop(
                        Shape.of("capacity-warm-up-" + round, 1, subscribers, CAPACITY_WARM_UP_EVENTS),
                        uris.get(0), new NodeEnds(new RawHttpEnds(false), uris, uris),
                        () -> ResourceSnapshot.UNKNOWN).run();
                long[] now = JitActivity.totalCompiles(nodes.pids());
                long most = 0;
                for (int i = 0; i < now.length; i++) {
                    most = Math.max(most, now[i] - compiled[i]);
                }
                compiled = now;
                System.err.println("bench: capacity warm-up round " + round + ": " + loop.events()
                        + " events, at most " + most + " methods compiled by a node");
                quietRounds = most <= QUIET_COMPILES_PER_ROUND ? quietRounds + 1 : 0;
                if (quietRounds >= QUIET_ROUNDS) {
                    return;
                }
                if (deadline.passed()) {
                    System.err.println("bench: the nodes still compile after " + CAPACITY_WARM_UP_LIMIT.toSeconds()
                            + " s of warm-up; measuring anyway");
                    return;
                }
            }
        }

        @Override
        public void close() {
            servers.forEach(ServerJvm::close);
            quotas.forEach(CpuQuota::close);
            natsServers.close();
            directory.close();
        }
    }
}

package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The command line of {@link Bench}, parsed.
 *
 * @param scenarios the scenarios to run, in order
 * @param counts    per scenario, {@code --events} or the scenario's default (the smoke run's own counts)
 * @param target    {@code --target}: a running server to measure, or null to start one in-process
 * @param pid       {@code --pid}: the process id of the {@code --target} server, to read its threads and RSS
 * @param out       {@code --out}: the directory for the result files
 * @param seconds   {@code --seconds}: how long T and the store scenario's sustained phase publish
 * @param warmUp    {@code --warm-up-seconds}: unmeasured publishing on each new server before its rows
 * @param runs      {@code --runs}: how often each scenario runs; above 1 a table of medians follows
 * @param store     the store scenario's own options, defaults filled in
 * @param cluster   the cluster scenario's own options, defaults filled in
 * @param overrides every other {@code --key=value}: configuration of the in-process server (cpu: of its
 *                  server processes)
 */
record BenchOptions(List<Scenario> scenarios, Map<Scenario, Integer> counts, URI target, OptionalLong pid,
                    Path out, int seconds, Duration warmUp, int runs, StoreOptions store,
                    ClusterOptions cluster, Map<String, String> overrides) {

    static final String USAGE = """
            usage: bench <SCENARIO[,SCENARIO...]|all|smoke> [--events=N] [--runs=N] [--warm-up-seconds=N]
                         [--seconds=N] [--target=http://host:port [--pid=N]] [--out=DIR] [--key=value ...]
                   bench store [--events=N] [--seconds=N] [--mysql-url=URL] [--mysql-user=USER] [--out=DIR]
                   bench cpu [--events=N] [--runs=N] [--warm-up-seconds=N] [--out=DIR] [--key=value ...]
                   bench cluster [--events=N] [--cpu-quota=CORES] [--subscribers=N] [--step-seconds=N]
                         [--warm-up-seconds=N] [--out=DIR] [--key=value ...]
                   bench secure-push [--events=N] [--runs=N] [--warm-up-seconds=N] [--out=DIR] [--key=value ...]
                   bench reliability <flood|streams|bodies|crash|push|soak|all> [options]: the reliability suite
                         against the server as a process ('bench reliability' alone lists its options)
            scenarios (latency from before the publish call to the subscriber's parse, one clock; the peers
            Mosquitto and NATS measured beside A, B, C and F when they run on this machine):
              A      1 publisher, 1 subscriber, N (2000) sequential events; ablation: a new connection per
                     publish; the same through our client libraries
              B      1 publisher, 1 and 6 subscribers, N (9000) events
              C      10 publishers at once, 10 subscribers, N (1000) events each; also through our libraries
              D      1 publisher, 7 subscribers, N (3000) events, one server per worker pool size (4 to 64 and
                     Grizzly's default)
              F      fan-out: 1 publisher, 1000 subscribers, N (200) events
              P      Arrowhead 4.x push: 1 publisher, 1, 10 and 100 push subscribers (a local HTTP server each),
                     N (2000) events, N/4 for 100; 1 subscriber at 500 events/s; each beside as many SSE
                     subscribers
              T      throughput: 1 and 8 publishers, single events and batches of 100, --seconds (10) each
              M      memory: N (10000) idle subscribers: heap, RSS, threads; then one event to all (needs
                     2 x N file descriptors in-process: run it with 'scripts/bench process M')
              S      4 KiB events at 250/s to 9 healthy subscribers, then with 1 stalled among them, N (4000)
                     events, latency from each event's scheduled time;
                     ablation: the same with publisher-thread writes instead of per-subscriber queues
              all    A, B, C, D, F, P, T and S
              smoke  A (1000 events) and S (1500 events) after a 5 s warm-up: a check of delivery, for CI
              store  after a 60 s warm-up, per event store configuration (off; async, sync on H2; async, sync on
                     MariaDB) a server of its own: A's latency with N (2000) events, the rate of 8
                     publishers for --seconds, how long the log then takes to catch up, and whether it
                     holds every accepted event; then the read flood: on async H2 with a log of 1 000 000
                     events, A's latency and the 8 publishers' rate without and with 8 subscribers resuming
                     from id 0 again and again
              cpu    the server process's CPU time (utime + stime in /proc/PID/stat: collections, JIT and the
                     event log's writer included) per event and per delivery, beside Mosquitto's and NATS's
                     processes in the same run: A (1 subscriber) and B (6) with N (30000) events, F (200
                     subscribers) with N/10; ours as a process of its own, once on the packed defaults (store
                     async on H2) and once with store.mode=off, each after a --warm-up-seconds (20) warm-up;
                     then issue 13's targets, met or missed
              cluster  cluster mode (issue 14), as processes, beside single-node mode: latency of A and B
                     (N (5000) events; B with 6 subscribers) on one node, then on 3 nodes over 3 clustered
                     nats-server processes (replicas 3) with the subscribers on the publisher's node and on
                     another; then fan-out capacity, 1 node against 3, warmed up under that load until their
                     JIT is nearly idle, then each held to --cpu-quota (0.25) core by a cgroup (needs root),
                     --subscribers (90) spread evenly, one publisher at a fixed pace, its events to each node
                     in turn, raised by half every --step-seconds (5) until the p99 passes 50 ms twice, then
                     narrowed down to within 5% of the limit
              secure-push  issue 27's push criterion: N (10000) events at 200/s to 5 push subscribers, the
                     server as a process in secure mode (mutual TLS, certificates made with keytool for the run:
                     subscribers that require the server's client certificate and subscribe with their own, a
                     publisher with its own) and as another in insecure mode, each warmed up with unmeasured push
                     for --warm-up-seconds, measured one after the other (the order swapped each run): latency,
                     process CPU per event, connections open to each subscriber at the end (counted on the
                     subscriber's side, and eventhandler_push_connections); then the criterion, held or missed
            options:
              --events     the count N above
              --runs       run each scenario N times (default 1); above 1, a table of the medians follows
              --warm-up-seconds  unmeasured publishing on each new server before its rows (default 10; cpu 20)
              --target     measure a running server instead of starting one in this JVM (not D, store, cpu,
                           cluster, secure-push)
              --pid        with --target: the server's process id, to read its CPU time, threads and RSS
              --mysql-url  store: the database of the MariaDB rows, whose event log tables are dropped before
                           each row (default jdbc:mysql://127.0.0.1:3306/test); unreachable, the rows are skipped
              --mysql-user store: that database's user (default root), with an empty password
              --out        directory for the JSON, CSV and PNG results
              --key=value  any other: configuration of the in-process server, as in config/eventhandler.properties
                           (cpu: of its server processes)
            exit: 0 all delivered, 1 events lost, duplicated, out of order or missing from the log, 2 the run failed""";
    static final int DEFAULT_SECONDS = 10;
    static final int DEFAULT_WARM_UP_SECONDS = 10;
    static final String DEFAULT_MYSQL_URL = "jdbc:mysql://127.0.0.1:3306/test";
    static final String DEFAULT_MYSQL_USER = "root";
    static final double DEFAULT_CPU_QUOTA = 0.25;
    static final int DEFAULT_SUBSCRIBERS = 90;
    static final int DEFAULT_STEP_SECONDS = 5;
    private static final String ALL = "all";
    private static final String SMOKE = "smoke";
    private static final Map<Scenario, Integer> SMOKE_COUNTS = Map.of(Scenario.A, 1000, Scenario.S, 1500);
    private static final int SMOKE_WARM_UP_SECONDS = 5;
    /**
     * cpu's servers are processes of their own whose CPU time is the measure: they start cold, and the JIT's
     * compilations in a row, on 2 cores shared with the clients, would be charged to its events.
     */
    private static final int CPU_WARM_UP_SECONDS = 20;

    /**
     * The store scenario's own options.
     *
     * @param mysqlUrl  {@code --mysql-url}: the JDBC URL of the database of its MariaDB rows
     * @param mysqlUser {@code --mysql-user}: that database's user
     */
    record StoreOptions(String mysqlUrl, String mysqlUser) {
    }

    /**
     * The cluster scenario's own options.
     *
     * @param cpuQuota    {@code --cpu-quota}: the share of a core each node is held to in the capacity rows
     * @param subscribers {@code --subscribers}: the capacity rows' subscribers, spread over the nodes
     * @param stepSeconds {@code --step-seconds}: how long each pace of the capacity rows lasts
     */
    record ClusterOptions(double cpuQuota, int subscribers, int stepSeconds) {
    }

    private static double quota(String value) {
        try {
            double cores = Double.parseDouble(value);
            if (cores > 0 && cores <= 64) {
                return cores;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--cpu-quota must be a share of a core such as 0.4, not '" + value + "'");
    }

    /** The scenarios' names joined for a file name: {@code A}, {@code all}, {@code A,S}. */
    String label() {
        return scenarios.stream().map(Scenario::label).reduce((a, b) -> a + "," + b).orElseThrow();
    }

    /** Parses the arguments; {@code defaultOut} is the result directory when {@code --out} is not given. */
    static BenchOptions parse(String[] args, Path defaultOut) {
        if (args.length == 0 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("name a scenario first");
        }
        Map<String, String> options = CommandLine.options(args);
        String events = options.remove("events");
        String target = options.remove("target");
        String pid = options.remove("pid");
        String out = options.remove("out");
        String seconds = options.remove("seconds");
        String warmUp = options.remove("warm-up-seconds");
        String runs = options.remove("runs");
        String mysqlUrl = options.remove("mysql-url");
        String mysqlUser = options.remove("mysql-user");
        String cpuQuota = options.remove("cpu-quota");
        String subscribers = options.remove("subscribers");
        String stepSeconds = options.remove("step-seconds");
        boolean smoke = SMOKE.equals(args[0]);
        List<Scenario> scenarios = scenarios(args[0]);
        if (target == null && pid != null) {
            throw new IllegalArgumentException("--pid goes with --target; in-process the bench sees its own process");
        }
        if (target != null && !options.isEmpty()) {
            throw new IllegalArgumentException("configuration overrides " + options.keySet()
                    + " apply to the in-process server only, not to --target");
        }
        check(scenarios, target, mysqlUrl != null || mysqlUser != null, options);
        if ((cpuQuota != null || subscribers != null || stepSeconds != null) && !scenarios.contains(Scenario.CLUSTER)) {
            throw new IllegalArgumentException("--cpu-quota, --subscribers and --step-seconds go with the cluster"
                    + " scenario");
        }
        Map<Scenario, Integer> counts = new LinkedHashMap<>();
        for (Scenario scenario : scenarios) {
            counts.put(scenario, events != null ? (int) CommandLine.positive("events", events)
                    : smoke ? SMOKE_COUNTS.get(scenario) : scenario.defaultCount());
        }
        int defaultWarmUp = smoke ? SMOKE_WARM_UP_SECONDS
                : scenarios.contains(Scenario.CPU) ? CPU_WARM_UP_SECONDS : DEFAULT_WARM_UP_SECONDS;
        return new BenchOptions(scenarios, counts,
                target == null ? null : targetUri(target),
                pid == null ? OptionalLong.empty() : OptionalLong.of(CommandLine.positive("pid", pid)),
                out == null ? defaultOut : Path.of(out),
                seconds == null ? DEFAULT_SECONDS : (int) CommandLine.positive("seconds", seconds),
                Duration.ofSeconds(warmUp == null ? defaultWarmUp : CommandLine.notNegative("warm-up-seconds", warmUp)),
                runs == null ? 1 : (int) CommandLine.positive("runs", runs),
                new StoreOptions(mysqlUrl == null ? DEFAULT_MYSQL_URL : mysqlUrl,
                        mysqlUser == null ? DEFAULT_MYSQL_USER : mysqlUser),
                new ClusterOptions(cpuQuota == null ? DEFAULT_CPU_QUOTA : quota(cpuQuota),
                        subscribers == null ? DEFAULT_SUBSCRIBERS : (int) CommandLine.positive("subscribers", subscribers),
                        stepSeconds == null ? DEFAULT_STEP_SECONDS
                                : (int) CommandLine.positive("step-seconds", stepSeconds)),
                options);
    }

    private static List<Scenario> scenarios(String names) {
        if (ALL.equals(names)) {
            return Scenario.ALL;
        }
        if (SMOKE.equals(names)) {
            return new ArrayList<>(SMOKE_COUNTS.keySet().stream().sorted().toList());
        }
        List<Scenario> scenarios = new ArrayList<>();
        for (String name : names.split(",", -1)) {
            scenarios.add(Scenario.named(name).orElseThrow(
                    () -> new IllegalArgumentException("unknown scenario '" + name + "'")));
        }
        return scenarios;
    }

    /**
     * Scenarios that start servers of their own set some settings row by row: a {@code --target} or an
     * override of those settings would measure something else than their rows say.
     */
    private static void check(List<Scenario> scenarios, String target, boolean storeOptionGiven,
                              Map<String, String> overrides) {
        if (storeOptionGiven && !scenarios.contains(Scenario.STORE)) {
            throw new IllegalArgumentException("--mysql-url and --mysql-user go with the store scenario");
        }
        for (Scenario scenario : scenarios) {
            Set<String> rowSettings = switch (scenario) {
                case STORE -> StoreScenario.ROW_SETTINGS;
                case D -> Set.of(WorkerPoolScenario.ROW_SETTING);
                case S -> SlowSubscriberScenario.ROW_SETTINGS;
                case T -> Set.of(ThroughputScenario.ROW_SETTING);
                case CPU -> CpuScenario.ROW_SETTINGS;
                case CLUSTER -> Set.of("store.mode");
                case SECURE_PUSH -> SecurePushScenario.ROW_SETTINGS;
                default -> Set.of();
            };
            if (target != null && (scenario == Scenario.STORE || scenario == Scenario.D || scenario == Scenario.CPU
                    || scenario == Scenario.CLUSTER || scenario == Scenario.SECURE_PUSH)) {
                throw new IllegalArgumentException("scenario " + scenario.label() + " starts a server of its own"
                        + " for each row; --target does not go with it");
            }
            List<String> overridden = overrides.keySet().stream().filter(rowSettings::contains).toList();
            if (!overridden.isEmpty()) {
                throw new IllegalArgumentException("scenario " + scenario.label() + " sets " + overridden
                        + " itself, row by row");
            }
        }
    }

    private static URI targetUri(String value) {
        URI uri;
        try {
            uri = URI.create(value);
        } catch (IllegalArgumentException e) {
            uri = null;
        }
        if (uri == null || !"http".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0
                || !(uri.getRawPath() == null || uri.getRawPath().isEmpty() || uri.getRawPath().equals("/"))) {
            throw new IllegalArgumentException("--target takes http://host:port, not '" + value + "'");
        }
        return URI.create("http://" + uri.getHost() + ":" + uri.getPort());
    }
}

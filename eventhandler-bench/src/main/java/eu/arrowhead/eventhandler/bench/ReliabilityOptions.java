package eu.arrowhead.eventhandler.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The command line of {@link Reliability}, parsed. A number not given is null: each mode has its own default.
 *
 * @param modes         the modes to run, in order
 * @param seconds       {@code --seconds}
 * @param count         {@code --count}
 * @param workerThreads {@code --worker-threads}: the server's {@code server.worker-threads} in bodies
 * @param kills         {@code --kills}
 * @param rate          {@code --rate}: events per second
 * @param minutes       {@code --minutes}
 * @param heap          {@code --heap}: the server's {@code -Xmx}
 * @param mysqlUrl      {@code --mysql-url}: crash also on this database; null for H2 only
 * @param mysqlUser     {@code --mysql-user}
 * @param serverJar     the server's runnable jar
 * @param out           {@code --out}: the directory for the result files and the servers' output
 * @param settings      every {@code --key.name=value}: configuration of the servers the modes start
 */
record ReliabilityOptions(List<ReliabilityMode> modes, Integer seconds, Integer count, int workerThreads,
                          int kills, Integer rate, int minutes, String heap, String mysqlUrl, String mysqlUser,
                          Path serverJar, Path out, Map<String, String> settings) {

    static final String USAGE = """
            usage: bench reliability <MODE[,MODE...]|all> [--seconds=N] [--count=N] [--kills=N] [--rate=N]
                         [--minutes=N] [--heap=SIZE] [--worker-threads=N] [--mysql-url=URL] [--mysql-user=USER]
                         [--out=DIR] [--key=value ...]
            Attacks on the server as a process of its own (the jar of -Deventhandler.jar, which scripts/bench
            sets), on 127.0.0.1, each on a new event store in a temporary directory; what happened is reported.
            modes:
              flood    server at -Xmx64m: 4 connections post valid 1000-event batches for --seconds (30);
                       answers by status, whether the server stayed up, then every acknowledged id looked up
                       in the event log (after a restart if the server died) and the log's dropped events
              streams  server at -Xmx64m: --count (3000) idle SSE streams on raw sockets, past
                       subscriber.max-count if the heap allows: served, refused (503 or a refusal stream),
                       unanswered; then the server's heap after a full collection, and whether it still
                       answers echo and a publish and delivers it to the served streams
              bodies   --count (2 x --worker-threads, 32) connections trickle a publish body a byte a second
                       into a server with server.worker-threads=--worker-threads (16); meanwhile echo,
                       mgmt/health, a small and a 20 KB publish are timed, and a Content-Length over the
                       limit; the tricklers' answers are watched for --seconds (120)
              crash    kill -9 --kills (5) times in store.mode async and sync, on H2 and on the database of
                       --mysql-url when given, while 4 publishers publish --rate (1250) events/s for --seconds
                       (5) before each kill; after each restart every acknowledged id is looked up in the log
                       and among the holes that a replay from 0 announces (eventhandler.replay-gap)
              push     an Arrowhead 4.x push subscriber down while --count (50000) events of its type are
                       published into a server in store.mode=sync on H2; kill -9, start again, the subscriber
                       back: every acknowledged event must arrive, in order; then the same killed again while
                       the subscriber catches up (what arrives twice is counted: at least once)
              soak     --rate (200) events/s from 4 publishers to 10 SSE subscribers (which resume as clients
                       do) for --minutes (60); every 10 s the server's heap after a full collection, RSS,
                       threads and open file descriptors; at the end each subscriber's deliveries
              all      flood, streams, bodies, crash and soak (push runs by its name only)
            options:
              --heap         the server's -Xmx (flood and streams: 64m; the others: the JVM's default)
              --mysql-url    crash: also on this MySQL/MariaDB database (jdbc:mysql://127.0.0.1:3306/NAME); its
                             event log tables are DROPPED first: give it a database of its own
              --mysql-user   that database's user (default root), with an empty password
              --out          directory for the JSON and CSV results and the servers' output
              --key=value    a key with a dot: configuration of the servers, as in config/eventhandler.properties
            Each mode stops by itself and kills the servers it started (Ctrl-C too).
            exit: 0 the server held, 1 it failed somewhere (lost acknowledged events, died, stalled, ...),
                  2 the run itself failed""";
    static final String DEFAULT_MYSQL_USER = "root";
    static final int DEFAULT_WORKER_THREADS = 16;
    static final int DEFAULT_KILLS = 5;
    static final int DEFAULT_MINUTES = 60;
    private static final String ALL = "all";
    /** What crash and push set themselves, row by row. */
    private static final Set<String> CRASH_SETTINGS = Set.of("store.mode", "store.url", "store.user",
            "store.password");

    /** Parses the arguments after {@code reliability}; {@code defaultOut} is used when {@code --out} is not given. */
    static ReliabilityOptions parse(String[] args, Path defaultOut) {
        if (args.length == 0 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("name a mode first: flood, streams, bodies, crash, push, soak or all");
        }
        List<ReliabilityMode> modes = modes(args[0]);
        Map<String, String> options = CommandLine.options(args);
        Integer seconds = optional(options.remove("seconds"), "seconds");
        Integer count = optional(options.remove("count"), "count");
        Integer workerThreads = optional(options.remove("worker-threads"), "worker-threads");
        Integer kills = optional(options.remove("kills"), "kills");
        Integer rate = optional(options.remove("rate"), "rate");
        Integer minutes = optional(options.remove("minutes"), "minutes");
        String heap = options.remove("heap");
        String mysqlUrl = options.remove("mysql-url");
        String mysqlUser = options.remove("mysql-user");
        String out = options.remove("out");
        if (heap != null && !heap.matches("\\d+[kKmMgG]?")) {
            throw new IllegalArgumentException("--heap takes an -Xmx size such as 64m, not '" + heap + "'");
        }
        if ((mysqlUrl != null || mysqlUser != null) && !modes.contains(ReliabilityMode.CRASH)) {
            throw new IllegalArgumentException("--mysql-url and --mysql-user go with the crash mode");
        }
        if (mysqlUrl != null && !mysqlUrl.matches("jdbc:mysql://(127\\.0\\.0\\.1|localhost)(:\\d+)?/\\w+.*")) {
            // The suite's traffic stays on this machine: it drops the database's tables.
            throw new IllegalArgumentException("--mysql-url takes jdbc:mysql://127.0.0.1:PORT/DATABASE (a database"
                    + " on this machine), not '" + mysqlUrl + "'");
        }
        Map<String, String> settings = new LinkedHashMap<>();
        options.forEach((key, value) -> {
            if (!key.contains(".")) {
                throw new IllegalArgumentException("unknown option --" + key);
            }
            settings.put(key, value);
        });
        List<String> crashOwn = settings.keySet().stream().filter(CRASH_SETTINGS::contains).toList();
        for (ReliabilityMode own : List.of(ReliabilityMode.CRASH, ReliabilityMode.PUSH)) {
            if (modes.contains(own) && !crashOwn.isEmpty()) {
                throw new IllegalArgumentException(own.label() + " sets " + crashOwn + " itself, row by row");
            }
        }
        return new ReliabilityOptions(modes, seconds, count,
                workerThreads == null ? DEFAULT_WORKER_THREADS : workerThreads,
                kills == null ? DEFAULT_KILLS : kills, rate, minutes == null ? DEFAULT_MINUTES : minutes, heap,
                mysqlUrl, mysqlUser == null ? DEFAULT_MYSQL_USER : mysqlUser,
                ServerJvm.jar(), out == null ? defaultOut : Path.of(out),
                settings);
    }

    /** {@code --seconds}, or the mode's default. */
    int secondsOr(int modeDefault) {
        return seconds == null ? modeDefault : seconds;
    }

    /** {@code --count}, or the mode's default. */
    int countOr(int modeDefault) {
        return count == null ? modeDefault : count;
    }

    /** {@code --rate}, or the mode's default. */
    int rateOr(int modeDefault) {
        return rate == null ? modeDefault : rate;
    }

    /** {@code --heap}, or the mode's default (null: the JVM's). */
    String heapOr(String modeDefault) {
        return heap == null ? modeDefault : heap;
    }

    /**
     * A mode's server settings: {@code own}, then the command line's, which win (crash refuses those it
     * sets itself).
     */
    Map<String, String> settings(Map<String, String> own) {
        Map<String, String> all = new LinkedHashMap<>(own);
        all.putAll(settings);
        return all;
    }

    /** The modes' names joined, for a file name. */
    String label() {
        return modes.stream().map(ReliabilityMode::label).reduce((a, b) -> a + "," + b).orElseThrow();
    }

    private static List<ReliabilityMode> modes(String names) {
        if (ALL.equals(names)) {
            return ReliabilityMode.all();
        }
        List<ReliabilityMode> modes = new ArrayList<>();
        for (String name : names.split(",", -1)) {
            modes.add(ReliabilityMode.named(name).orElseThrow(
                    () -> new IllegalArgumentException("unknown mode '" + name + "'")));
        }
        return modes;
    }

    private static Integer optional(String value, String option) {
        return value == null ? null : (int) CommandLine.positive(option, value);
    }
}

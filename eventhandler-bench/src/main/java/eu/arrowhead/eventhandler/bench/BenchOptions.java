package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The command line of {@link Bench}, parsed.
 *
 * @param scenario  the scenario's name as given
 * @param count     {@code --events}: events, or subscribers for idle; empty for the scenario's default
 * @param target    {@code --target}: a running server to measure, or null to start one in-process
 * @param pid       {@code --pid}: the process id of the {@code --target} server, to read its threads and RSS
 * @param out       {@code --out}: the directory for the result files
 * @param store     the store scenario's own options, defaults filled in
 * @param overrides every other {@code --key=value}: configuration of the in-process server
 */
record BenchOptions(String scenario, OptionalInt count, URI target, OptionalLong pid, Path out,
                    StoreOptions store, Map<String, String> overrides) {

    static final String USAGE = """
            usage: bench <A|idle> [--events=N] [--target=http://host:port [--pid=N]] [--out=DIR] [--key=value ...]
                   bench store [--events=N] [--seconds=N] [--mysql-url=URL] [--mysql-user=USER] [--out=DIR] \
            [--key=value ...]
              A      1 publisher, 1 subscriber, N (default 2000) sequential events; then the same with a new
                     connection per publish
              idle   N (default 1000) idle subscribers: the server's threads and memory, then one event to all
              store  after a 60 s warm-up, per event store configuration (off; async, sync on H2; async, sync on
                     MariaDB) a server of its own: A's latency with N (default 2000) events, the rate of 8
                     publishers as fast as they can, how long the log then takes to catch up, and whether it
                     holds every accepted event
              --target  measure a running server instead of starting one in this JVM
              --pid     with --target: the server's process id, to read its threads and RSS from /proc
              --seconds     store: how long the 8 publishers publish (default 10)
              --mysql-url   store: the database of the MariaDB rows, whose event log tables are dropped before
                            each row (default jdbc:mysql://127.0.0.1:3306/test); unreachable, the rows are skipped
              --mysql-user  store: that database's user (default root), with an empty password
              --out     directory for the JSON and CSV results
              --key=value  any other: configuration of the in-process server, as in config/eventhandler.properties
            exit: 0 all delivered, 1 events lost, duplicated, out of order or missing from the log, 2 the run failed""";
    static final int DEFAULT_SECONDS = 10;
    static final String DEFAULT_MYSQL_URL = "jdbc:mysql://127.0.0.1:3306/test";
    static final String DEFAULT_MYSQL_USER = "root";

    /**
     * The store scenario's own options.
     *
     * @param seconds   {@code --seconds}: how long its sustained phase publishes
     * @param mysqlUrl  {@code --mysql-url}: the JDBC URL of the database of its MariaDB rows
     * @param mysqlUser {@code --mysql-user}: that database's user
     */
    record StoreOptions(int seconds, String mysqlUrl, String mysqlUser) {
    }

    /** Parses the arguments; {@code defaultOut} is the result directory when {@code --out} is not given. */
    static BenchOptions parse(String[] args, Path defaultOut) {
        if (args.length == 0 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("name a scenario first");
        }
        Map<String, String> options = new LinkedHashMap<>();
        for (String arg : Arrays.copyOfRange(args, 1, args.length)) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 3) {
                throw new IllegalArgumentException("'" + arg + "' is not of the form --key=value");
            }
            options.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        String events = options.remove("events");
        String target = options.remove("target");
        String pid = options.remove("pid");
        String out = options.remove("out");
        String seconds = options.remove("seconds");
        String mysqlUrl = options.remove("mysql-url");
        String mysqlUser = options.remove("mysql-user");
        if (target == null && pid != null) {
            throw new IllegalArgumentException("--pid goes with --target; in-process the bench sees its own process");
        }
        if (target != null && !options.isEmpty()) {
            throw new IllegalArgumentException("configuration overrides " + options.keySet()
                    + " apply to the in-process server only, not to --target");
        }
        checkStoreOptions(args[0], target, seconds != null || mysqlUrl != null || mysqlUser != null, options);
        return new BenchOptions(args[0],
                events == null ? OptionalInt.empty() : OptionalInt.of((int) positive("events", events)),
                target == null ? null : targetUri(target),
                pid == null ? OptionalLong.empty() : OptionalLong.of(positive("pid", pid)),
                out == null ? defaultOut : Path.of(out),
                new StoreOptions(seconds == null ? DEFAULT_SECONDS : (int) positive("seconds", seconds),
                        mysqlUrl == null ? DEFAULT_MYSQL_URL : mysqlUrl,
                        mysqlUser == null ? DEFAULT_MYSQL_USER : mysqlUser),
                options);
    }

    /**
     * The store scenario starts its own servers, each with the store settings of its row: a {@code --target}
     * or an override of those settings would measure something else than its rows say.
     */
    private static void checkStoreOptions(String scenario, String target, boolean storeOptionGiven,
                                          Map<String, String> overrides) {
        if (!Scenario.STORE.label().equals(scenario)) {
            if (storeOptionGiven) {
                throw new IllegalArgumentException(
                        "--seconds, --mysql-url and --mysql-user go with the store scenario");
            }
            return;
        }
        if (target != null) {
            throw new IllegalArgumentException("the store scenario starts a server of its own for each store"
                    + " configuration; --target does not go with it");
        }
        List<String> rowSettings = overrides.keySet().stream().filter(StoreScenario.ROW_SETTINGS::contains).toList();
        if (!rowSettings.isEmpty()) {
            throw new IllegalArgumentException("the store scenario sets " + rowSettings + " itself, row by row");
        }
    }

    private static long positive(String option, String value) {
        try {
            long number = Long.parseLong(value);
            if (number > 0 && number <= Integer.MAX_VALUE) {
                return number;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--" + option + " takes a whole number above 0, not '" + value + "'");
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

package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
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
 * @param overrides every other {@code --key=value}: configuration of the in-process server
 */
record BenchOptions(String scenario, OptionalInt count, URI target, OptionalLong pid, Path out,
                    Map<String, String> overrides) {

    static final String USAGE = """
            usage: bench <A|idle> [--events=N] [--target=http://host:port [--pid=N]] [--out=DIR] [--key=value ...]
              A      1 publisher, 1 subscriber, N (default 2000) sequential events; then the same with a new
                     connection per publish
              idle   N (default 1000) idle subscribers: the server's threads and memory, then one event to all
              --target  measure a running server instead of starting one in this JVM
              --pid     with --target: the server's process id, to read its threads and RSS from /proc
              --out     directory for the JSON and CSV results
              --key=value  any other: configuration of the in-process server, as in config/eventhandler.properties
            exit: 0 all delivered, 1 events lost, duplicated or out of order, 2 the run failed""";

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
        if (target == null && pid != null) {
            throw new IllegalArgumentException("--pid goes with --target; in-process the bench sees its own process");
        }
        if (target != null && !options.isEmpty()) {
            throw new IllegalArgumentException("configuration overrides " + options.keySet()
                    + " apply to the in-process server only, not to --target");
        }
        return new BenchOptions(args[0],
                events == null ? OptionalInt.empty() : OptionalInt.of((int) positive("events", events)),
                target == null ? null : targetUri(target),
                pid == null ? OptionalLong.empty() : OptionalLong.of(positive("pid", pid)),
                out == null ? defaultOut : Path.of(out),
                options);
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

package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.config.ConfigException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * The benchmark command:
 * {@code java -jar eventhandler-bench.jar <A|idle|store> [--events=N] [--target=http://host:port [--pid=N]]
 * [--seconds=N] [--mysql-url=URL] [--mysql-user=USER] [--out=DIR] [--key=value ...]}.
 *
 * <p>Without {@code --target} it starts a server in this JVM on a free port of 127.0.0.1, configured with
 * the packed defaults and the {@code --key=value} overrides; the store scenario starts one such server per
 * event store configuration, and takes no {@code --target}. Progress goes to stderr, the result tables to
 * stdout, and JSON and CSV copies to {@code --out} (default: {@code results} next to the jar). The exit
 * status is 0 when every event arrived once and in order (and, in the store scenario, is in the event log),
 * 1 when not, 2 when the run itself failed.
 */
public final class Bench {
    private static final int DELIVERY_FAILED = 1;
    private static final int RUN_FAILED = 2;

    private Bench() {
    }

    public static void main(String[] args) {
        // The server's INFO lines would run through the report; set before the first logger is made.
        if (System.getProperty("eventhandler.log.level") == null) {
            System.setProperty("eventhandler.log.level", "WARN");
        }
        System.exit(run(args));
    }

    private static int run(String[] args) {
        BenchOptions options;
        Scenario scenario;
        try {
            options = BenchOptions.parse(args, defaultOut());
            scenario = Scenario.named(options.scenario()).orElseThrow(
                    () -> new IllegalArgumentException("unknown scenario '" + options.scenario() + "'"));
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage() + "\n" + BenchOptions.USAGE);
            return RUN_FAILED;
        }
        try {
            return run(scenario, options);
        } catch (BenchException | ConfigException e) {
            System.err.println("bench: " + scenario.label() + " failed: " + e.getMessage());
            return RUN_FAILED;
        }
    }

    private static int run(Scenario scenario, BenchOptions options) {
        Instant started = Instant.now();
        Scenario.Result result = scenario.run(options, options.count().orElse(scenario.defaultCount()));
        result.tables().forEach(table -> System.out.println(table.render()));
        List<Path> files = ResultWriter.write(options.out(), scenario.label(), started, result.tables());
        files.forEach(file -> System.err.println("bench: wrote " + file));
        result.failures().forEach(failure -> System.err.println("bench: FAILED " + failure));
        return result.failures().isEmpty() ? 0 : DELIVERY_FAILED;
    }

    /** {@code results} beside the jar, or beside {@code classes} when run from a build tree: target/results. */
    private static Path defaultOut() {
        try {
            return Path.of(Bench.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .getParent().resolve("results");
        } catch (URISyntaxException | RuntimeException e) {
            return Path.of("results");
        }
    }
}

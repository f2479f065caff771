package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.config.ConfigException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The benchmark command: {@code java -jar eventhandler-bench.jar <SCENARIO[,...]|all|smoke|store> [options]};
 * {@link BenchOptions#USAGE} lists the scenarios and options. {@code reliability <MODE[,...]|all> [options]}
 * runs the {@link Reliability} suite instead.
 *
 * <p>Without {@code --target} each scenario starts a server in this JVM on a free port of 127.0.0.1 (some
 * one per row), configured with the packed defaults and the {@code --key=value} overrides. Progress goes
 * to stderr, the result tables to stdout, and JSON, CSV and PNG copies to {@code --out} (default:
 * {@code results} next to the jar). The exit status is 0 when every event arrived once and in order (and,
 * in the store scenario, is in the event log), 1 when not, 2 when the run itself failed.
 */
public final class Bench {
    private static final int DELIVERY_FAILED = 1;
    private static final int RUN_FAILED = 2;
    private static final String RELIABILITY = "reliability";

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
        if (args.length > 0 && RELIABILITY.equals(args[0])) {
            return Reliability.run(Arrays.copyOfRange(args, 1, args.length), defaultOut());
        }
        BenchOptions options;
        try {
            options = BenchOptions.parse(args, defaultOut());
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage() + "\n" + BenchOptions.USAGE);
            return RUN_FAILED;
        }
        List<String> failures = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (Scenario scenario : options.scenarios()) {
            try {
                failures.addAll(run(scenario, options));
            } catch (BenchException | ConfigException e) {
                // The next scenarios still run: a long run loses only what failed.
                broken.add(scenario.label() + ": " + e.getMessage());
                System.err.println("bench: " + scenario.label() + " failed: " + e.getMessage());
            }
        }
        failures.forEach(failure -> System.err.println("bench: FAILED " + failure));
        broken.forEach(failure -> System.err.println("bench: DID NOT RUN TO THE END " + failure));
        System.err.println("bench: " + options.label() + ": " + (failures.isEmpty() && broken.isEmpty()
                ? "every event delivered once and in order"
                : failures.size() + " delivery failures, " + broken.size() + " scenarios that failed"));
        return !broken.isEmpty() ? RUN_FAILED : failures.isEmpty() ? 0 : DELIVERY_FAILED;
    }

    /** Runs one scenario {@code --runs} times, with a table of medians after several; returns the failures. */
    private static List<String> run(Scenario scenario, BenchOptions options) {
        List<List<ResultTable>> runs = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (int run = 1; run <= options.runs(); run++) {
            String label = scenario.label() + (options.runs() == 1 ? "" : "-run" + run);
            System.err.println("bench: scenario " + label);
            Instant started = Instant.now();
            Scenario.Result result = scenario.run(options, options.counts().get(scenario));
            result.tables().forEach(table -> System.out.println(table.render()));
            write(options, label, started, result.tables());
            runs.add(result.tables());
            result.failures().forEach(failure -> failures.add(label + ": " + failure));
        }
        if (runs.size() > 1) {
            List<ResultTable> medians = scenario.medians(runs);
            medians.forEach(table -> System.out.println(table.render()));
            write(options, scenario.label() + "-median", Instant.now(), medians);
        }
        return failures;
    }

    private static void write(BenchOptions options, String label, Instant when, List<ResultTable> tables) {
        ResultWriter.write(options.out(), label, when, tables)
                .forEach(file -> System.err.println("bench: wrote " + file));
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

package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The reliability suite: {@code bench reliability <MODE[,...]|all> [options]}
 * ({@link ReliabilityOptions#USAGE}). Each mode attacks the server as a process of its own, as a hostile
 * or unlucky client would (floods, idle streams, slow bodies, kill -9, hours of steady load), and reports
 * what happened rather than stopping at the first thing that broke: the tables go to stdout, progress to
 * stderr, and JSON and CSV copies and the servers' output to {@code --out}. The exit status is 0 when the
 * server held everywhere, 1 when it failed somewhere, 2 when the run itself failed.
 */
final class Reliability {
    private static final int FAILED = 1;
    private static final int RUN_FAILED = 2;
    private static final int SHORT_TEXT = 160;

    private Reliability() {
    }

    /** @param args the arguments after {@code reliability} */
    static int run(String[] args, Path defaultOut) {
        ReliabilityOptions options;
        try {
            options = ReliabilityOptions.parse(args, defaultOut);
            Files.createDirectories(options.out());
        } catch (IllegalArgumentException e) {
            System.err.println("reliability: " + e.getMessage() + "\n" + ReliabilityOptions.USAGE);
            return RUN_FAILED;
        } catch (IOException e) {
            System.err.println("reliability: cannot create the result directory: " + e);
            return RUN_FAILED;
        }
        List<String> failures = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (ReliabilityMode mode : options.modes()) {
            String label = "reliability-" + mode.label();
            Instant started = Instant.now();
            Path serverLog = options.out().resolve(ResultWriter.prefix(label, started) + "-server.log");
            System.err.println("reliability: " + mode.label() + "; the servers' output goes to " + serverLog);
            try {
                Scenario.Result result = mode.run(options, serverLog);
                result.tables().forEach(table -> System.out.println(table.render()));
                ResultWriter.write(options.out(), label, started, result.tables())
                        .forEach(file -> System.err.println("reliability: wrote " + file));
                result.failures().forEach(failure -> failures.add(mode.label() + ": " + failure));
            } catch (BenchException e) {
                // The next modes still run: a long run loses only what failed.
                broken.add(mode.label() + ": " + e.getMessage());
                System.err.println("reliability: " + mode.label() + " failed: " + e.getMessage());
            } catch (RuntimeException e) {
                broken.add(mode.label() + ": " + e);
                System.err.println("reliability: " + mode.label() + " failed:");
                e.printStackTrace();
            }
        }
        failures.forEach(failure -> System.err.println("reliability: FAILED " + failure));
        broken.forEach(failure -> System.err.println("reliability: DID NOT RUN TO THE END " + failure));
        System.err.println("reliability: " + options.label() + ": " + (failures.isEmpty() && broken.isEmpty()
                ? "the server held" : failures.size() + " failures, " + broken.size() + " modes that did not run"
                + " to the end"));
        return !broken.isEmpty() ? RUN_FAILED : failures.isEmpty() ? 0 : FAILED;
    }

    /** A progress line of {@code mode} on stderr. */
    static void say(String mode, String what) {
        System.err.println("reliability: " + mode + ": " + what);
    }

    /** A server's answer or message on one line, cut short for a table cell. */
    static String shorten(String text) {
        String line = text.replace('\n', ' ');
        return line.length() <= SHORT_TEXT ? line : line.substring(0, SHORT_TEXT) + "...";
    }
}

package eu.arrowhead.eventhandler.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runnable jar (system property {@code eventhandler.jar}, set by failsafe) as users run it: a process of
 * its own, with its output read by a thread so that it never blocks on a full pipe.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on port (\\d+)");

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuffer all = new StringBuffer();

    private ServerProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    all.append(line).append('\n');
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "server-process-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts the jar in {@code workingDirectory} with these arguments. */
    public static ServerProcess start(Path workingDirectory, String... args) {
        return start(command(workingDirectory, args));
    }

    public static ServerProcess start(ProcessBuilder command) {
        try {
            return new ServerProcess(command.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The command that runs the jar, for a test that needs to change its environment first. */
    public static ProcessBuilder command(Path workingDirectory, String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m", "-jar",
                System.getProperty("eventhandler.jar")));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true);
    }

    /** The command that runs the jar as the Raspberry Pi unit does: a 64 MiB heap and the serial collector. */
    public static ProcessBuilder smallestHeapCommand(Path workingDirectory, String... args) {
        ProcessBuilder command = command(workingDirectory, args);
        command.command().replaceAll(arg -> arg.startsWith("-Xmx") ? "-Xmx64m" : arg);
        command.command().add(1, "-XX:+UseSerialGC");
        return command;
    }

    /** Waits until the server listens and returns its base URI. */
    public URI awaitListening() throws InterruptedException {
        return URI.create("http://127.0.0.1:" + await(LISTENING, 60).group(1));
    }

    public Process process() {
        return process;
    }

    /** Waits for a line of output matching {@code pattern}. */
    public Matcher await(Pattern pattern, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("no line matching " + pattern + " in:\n" + all);
            }
            Matcher matcher = pattern.matcher(line);
            if (matcher.find()) {
                return matcher;
            }
        }
    }

    /** Everything the process has printed so far. */
    public String output() {
        return all.toString();
    }

    /**
     * SIGTERM. ({@code Process.destroy()} would also close our end of its output, losing the last lines.)
     */
    public void terminate() {
        process.toHandle().destroy();
    }

    /** SIGKILL: the process gets no chance to finish anything. */
    public void kill() throws InterruptedException {
        process.toHandle().destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}

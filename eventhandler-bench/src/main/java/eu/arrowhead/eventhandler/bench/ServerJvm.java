package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's runnable jar as a process of its own, as users run it: on 127.0.0.1 and a free port, with a
 * heap and settings of the caller's, its output appended to a log file. It can be killed with SIGKILL,
 * stopped with SIGTERM and started again on the same settings (and so the same event store). Every
 * process started here is killed when the bench's JVM exits, on Ctrl-C too.
 */
final class ServerJvm implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on port (\\d+)");
    /** The level in the server's log lines, as its logback pattern puts it: between spaces. */
    private static final Pattern WARNING = Pattern.compile(" (WARN|ERROR) ");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration START_POLL = Duration.ofMillis(50);
    /** server.shutdown-grace-seconds (10 by default) and the event store's drain, with room to spare. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(40);
    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(30);
    private static final int LOG_TAIL_CHARS = 4000;
    private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();
    private static final String JAR_PROPERTY = "eventhandler.jar";
    private static final Path DEFAULT_JAR = Path.of("eventhandler-core", "target", "eventhandler.jar");

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> STARTED.forEach(Process::destroyForcibly),
                "bench-server-killer"));
    }

    /**
     * How to run the server.
     *
     * @param jar       the server's runnable jar
     * @param heap      the JVM's {@code -Xmx} value, such as {@code 64m}; null for the JVM's default
     * @param settings  the server's configuration beyond the packed defaults, as {@code --key=value}
     * @param directory the working directory
     * @param log       the file its output is appended to
     */
    record Spec(Path jar, String heap, Map<String, String> settings, Path directory, Path log) {

        List<String> command() {
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:+UseSerialGC"));
            if (heap != null) {
                command.add("-Xmx" + heap);
            }
            command.addAll(List.of("-jar", jar.toString(), "--server.host=127.0.0.1", "--server.port=0"));
            settings.forEach((key, value) -> command.add("--" + key + "=" + value));
            return command;
        }
    }

    private final Spec spec;
    private Process process;
    private URI baseUri;

    private ServerJvm(Spec spec) {
        this.spec = spec;
    }

    /** The server's jar: {@code -Deventhandler.jar}, which scripts/bench sets, or the build's (from the repository). */
    static Path jar() {
        String jar = System.getProperty(JAR_PROPERTY);
        return jar == null ? DEFAULT_JAR : Path.of(jar);
    }

    /** Starts the server and returns once it listens. */
    static ServerJvm start(Spec spec) {
        if (!Files.isRegularFile(spec.jar())) {
            throw new BenchException("no server jar at " + spec.jar() + ": build it with mvn -DskipTests package");
        }
        ServerJvm server = new ServerJvm(spec);
        server.launch();
        return server;
    }

    private void launch() {
        long logOffset;
        try {
            Files.writeString(spec.log(), "=== bench " + Instant.now() + ": " + String.join(" ", spec.command())
                    + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            logOffset = Files.size(spec.log());
            ProcessBuilder builder = new ProcessBuilder(spec.command()).directory(spec.directory().toFile())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(spec.log().toFile()));
            // The server reads EH_* variables as settings and refuses those it does not know: only the
            // settings given here are to reach it.
            builder.environment().keySet().removeIf(name -> name.startsWith("EH_"));
            process = builder.start();
        } catch (IOException e) {
            throw new BenchException("cannot start the server " + spec.command() + ": " + e, e);
        }
        STARTED.add(process);
        Deadline deadline = Deadline.in(START_TIMEOUT, "the server to listen");
        while (true) {
            Matcher listening = LISTENING.matcher(logSince(logOffset));
            if (listening.find()) {
                baseUri = URI.create("http://127.0.0.1:" + listening.group(1));
                return;
            }
            if (!process.isAlive() || deadline.passed()) {
                process.destroyForcibly();
                throw new BenchException("the server " + (process.isAlive() ? "did not listen within "
                        + START_TIMEOUT.toSeconds() + " s" : "exited at start") + "; its output:\n" + logTail());
            }
            sleep(START_POLL);
        }
    }

    URI baseUri() {
        return baseUri;
    }

    long pid() {
        return process.pid();
    }

    /** The file that holds the output of every run of this server. */
    Path log() {
        return spec.log();
    }

    /** Whether the process is running (it may still be hung). */
    boolean running() {
        return process.isAlive();
    }

    /** The server's threads, memory (its heap after a full collection) and CPU time; unknown once it has exited. */
    ResourceSnapshot snapshot() {
        if (!running()) {
            return ResourceSnapshot.UNKNOWN;
        }
        try {
            return new RemoteTarget(baseUri, OptionalLong.of(pid())).snapshot();
        } catch (BenchException e) {
            // it exited in between
            return ResourceSnapshot.UNKNOWN;
        }
    }

    /** The file descriptors the process holds, or null once it has exited. */
    Long openFiles() {
        try {
            return running() ? ProcStatus.openFiles(Long.toString(pid())) : null;
        } catch (BenchException e) {
            return null;
        }
    }

    /** {@code GET /eventhandler/echo}: whether and how fast the server answers at all. */
    HttpProbe.Answer echo(Duration timeout) {
        return HttpProbe.get(baseUri.resolve("/eventhandler/echo"), timeout);
    }

    /** Whether the output of any run so far contains {@code text}. */
    boolean logContains(String text) {
        return logSince(0).contains(text);
    }

    /** The lines of the output of every run so far that the server logged at WARN or ERROR. */
    List<String> warnings() {
        return logSince(0).lines().filter(line -> WARNING.matcher(line).find()).toList();
    }

    /** Prints the {@link #warnings} to stderr, followed by a line that names the server as {@code which}. */
    void reportWarnings(String which) {
        List<String> warnings = warnings();
        if (!warnings.isEmpty()) {
            warnings.forEach(System.err::println);
            System.err.println("bench: " + which + " logged the warnings and errors above");
        }
    }

    /** SIGKILL: the server gets no chance to finish anything. */
    void kill() {
        process.destroyForcibly();
        awaitExit(KILL_TIMEOUT);
    }

    /** SIGTERM, the way a service manager stops it; SIGKILL if it has not exited in time. */
    void stop() {
        if (!running()) {
            return;
        }
        process.destroy();
        if (!awaitExit(STOP_TIMEOUT)) {
            kill();
        }
    }

    /** Kills the server if it still runs, and starts it again on the same settings: a new port. */
    void restart() {
        if (running()) {
            kill();
        }
        launch();
    }

    @Override
    public void close() {
        stop();
    }

    private boolean awaitExit(Duration timeout) {
        try {
            boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (exited) {
                STARTED.remove(process);
            }
            return exited;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while waiting for the server to exit", e);
        }
    }

    private String logSince(long offset) {
        try (InputStream in = Files.newInputStream(spec.log())) {
            in.skipNBytes(Math.min(offset, Files.size(spec.log())));
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new BenchException("cannot read the server's output in " + spec.log() + ": " + e, e);
        }
    }

    private String logTail() {
        String all = logSince(0);
        return all.substring(Math.max(0, all.length() - LOG_TAIL_CHARS));
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted", e);
        }
    }
}

package eu.arrowhead.eventhandler.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runnable jar (system property {@code eventhandler.jar}, set by failsafe) as users run it: a process of
 * its own, with its output read by a thread so that it never blocks on a full pipe.
 *
 * <p>Every start maps the classes a start loads from a class-data archive, as {@code scripts/eventhandler} does
 * for users (docs/performance.md, "Start: class-data sharing"): the process tests start the server some 70 times
 * and kill and restart it under load, and a start without the archive spends about twice the CPU in loading,
 * verifying and linking classes. The archive is recorded once per build, by a start of its own the first time a
 * test asks for the command; a recording that fails leaves the starts as they were.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerProcess.class);
    private static final Pattern LISTENING = Pattern.compile("listening on port (\\d+)");
    /** Beside the jar; not the script's {@code eventhandler.jsa}, whose stamp the script keeps. */
    private static final String ARCHIVE_NAME = "eventhandler-tests.jsa";
    /** Whether this JVM tried to record the archive; guarded by the class. */
    private static boolean archiveTried;

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
        Path jar = jar();
        List<String> command = new ArrayList<>(List.of(java(), "-Xmx128m"));
        Path archive = classArchive(jar);
        if (archive != null) {
            command.add("-XX:SharedArchiveFile=" + archive);
        }
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true);
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * The jar by one path whatever the module that names it ({@code cluster-tests} names it through {@code ..}):
     * an archive is valid only for the class path it was recorded with.
     */
    private static Path jar() {
        try {
            return Path.of(System.getProperty("eventhandler.jar")).toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("the server's jar (system property eventhandler.jar)", e);
        }
    }

    /** The class-data archive for this jar, recorded first if the jar is newer; null if it cannot be had. */
    private static synchronized Path classArchive(Path jar) {
        Path archive = jar.resolveSibling(ARCHIVE_NAME);
        try {
            if (Files.isRegularFile(archive)
                    && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0) {
                return archive;
            }
            if (archiveTried) {
                return null;
            }
            archiveTried = true;
            return recordClassArchive(jar, archive) ? archive : null;
        } catch (IOException e) {
            LOG.warn("server processes start without a class-data archive: {}", e.toString());
            return null;
        }
    }

    /**
     * Starts the jar on its defaults with {@code -XX:ArchiveClassesAtExit} and stops it once it listens: the JVM
     * writes the archive as it exits. Written under a name of its own and moved into place only when complete.
     */
    private static boolean recordClassArchive(Path jar, Path archive) throws IOException {
        Path training = Files.createTempDirectory("eventhandler-class-archive");
        Path recording = archive.resolveSibling(ARCHIVE_NAME + "." + ProcessHandle.current().pid() + ".tmp");
        ServerProcess server = start(new ProcessBuilder(java(), "-Xmx128m", "-XX:ArchiveClassesAtExit=" + recording,
                "-jar", jar.toString(), "--server.port=0", "--server.host=127.0.0.1")
                .directory(training.toFile()).redirectErrorStream(true));
        try {
            server.awaitListening();
            server.terminate();
            if (!server.process().waitFor(120, TimeUnit.SECONDS) || !Files.isRegularFile(recording)) {
                LOG.warn("server processes start without a class-data archive: the recording start wrote none:\n{}",
                        server.output());
                return false;
            }
            Files.move(recording, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (InterruptedException | AssertionError e) {
            LOG.warn("server processes start without a class-data archive: {}", e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return false;
        } finally {
            server.process().destroyForcibly();
            Files.deleteIfExists(recording);
            deleteTree(training);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
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

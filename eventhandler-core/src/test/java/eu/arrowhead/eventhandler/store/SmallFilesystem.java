package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A tmpfs of a few megabytes mounted on a new temporary directory, for a log that fills its disk for real, and
 * grown later. Mounting needs root (CI runs as root, {@code .ci/run}); without it the test is skipped by an
 * assumption, so that {@code mvn verify} passes for a contributor without root.
 */
final class SmallFilesystem implements AutoCloseable {
    private final Path directory;

    private SmallFilesystem(Path directory) {
        this.directory = directory;
    }

    /** Mounts one of {@code megabytes}; skips the test if this user cannot mount. */
    static SmallFilesystem mount(int megabytes) throws IOException, InterruptedException {
        Path directory = Files.createTempDirectory("eventhandler-small-fs-");
        String failure = run("mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs", directory.toString());
        if (failure != null) {
            Files.delete(directory);
        }
        assumeTrue(failure == null, () -> "a small filesystem cannot be mounted here (root is needed): " + failure);
        return new SmallFilesystem(directory);
    }

    Path directory() {
        return directory;
    }

    /** Gives it room: the space a full disk gets back when files elsewhere are deleted or the volume is grown. */
    void grow(int megabytes) throws IOException, InterruptedException {
        String failure = run("mount", "-o", "remount,size=" + megabytes + "m", directory.toString());
        if (failure != null) {
            throw new IllegalStateException("the filesystem was not grown: " + failure);
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        String failure = run("umount", directory.toString());
        if (failure != null) {
            throw new IllegalStateException("the small filesystem stays mounted on " + directory + ": " + failure);
        }
        Files.delete(directory);
    }

    /** Runs a command; {@code null} if it succeeded, else what it said. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        } catch (IOException e) {
            return e.getMessage();
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return String.join(" ", command) + " did not finish";
        }
        return process.exitValue() == 0 ? null : String.join(" ", command) + ": " + output;
    }
}

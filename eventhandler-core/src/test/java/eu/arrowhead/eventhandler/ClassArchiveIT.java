package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13, a faster start: {@code scripts/eventhandler} records the classes a start loads into an archive
 * beside the jar once per jar, and starts map them from it (class-data sharing). Each test runs the script
 * on a copy of the jar in a directory of its own ({@code EVENTHANDLER_JAR}), so that it neither reads nor
 * replaces the archive beside the built jar that a developer's own starts use.
 */
class ClassArchiveIT {
    private static final Path SCRIPT = Path.of("../scripts/eventhandler").toAbsolutePath().normalize();
    /** Where {@code -Xlog:class+load} says a class Hibernate loads late in a start came from. */
    private static final String FROM_THE_ARCHIVE =
            "org.hibernate.internal.SessionFactoryImpl source: shared objects file (top)";
    private static final String RECORDING = "recording the classes a start loads";
    private static final Pattern LISTENING = Pattern.compile("listening on port \\d+");

    @TempDir
    Path directory;
    private Path jar;
    private int starts;

    @BeforeEach
    void copyTheJar() throws IOException {
        String built = System.getProperty("eventhandler.jar");
        assumeTrue(built != null, "the system property eventhandler.jar names the built jar (failsafe sets it)");
        jar = Files.copy(Path.of(built), Files.createDirectory(directory.resolve("jar")).resolve("eventhandler.jar"));
    }

    @Test
    void theScriptRecordsTheClassesOfAStartOncePerJarAndStartsMapThemFromTheArchive() throws Exception {
        Start first = start(Map.of());
        assertTrue(first.output.contains(RECORDING), first.output);
        assertTrue(Files.size(jar.resolveSibling("eventhandler.jsa")) > 0, "no archive beside " + jar);
        assertTrue(first.classes.contains(FROM_THE_ARCHIVE), "the start used the archive it had just recorded");

        Start second = start(Map.of());
        assertFalse(second.output.contains(RECORDING), "recorded again: " + second.output);
        assertTrue(second.classes.contains(FROM_THE_ARCHIVE), "the second start used the archive");

        // A jar deployed with an older mtime: the JVM would reject the archive, so it is recorded again.
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minus(Duration.ofDays(1))));
        Start third = start(Map.of());
        assertTrue(third.output.contains(RECORDING), "not recorded for the redeployed jar: " + third.output);
        assertTrue(third.classes.contains(FROM_THE_ARCHIVE), "the start used the archive for the redeployed jar");
    }

    @Test
    void aRecordingThatFailsIsNotTriedAgainForTheSameJarAndTheServerStartsWithoutIt() throws Exception {
        // A JVM told not to share classes cannot record them: the recording fails at once.
        Map<String, String> noSharing = Map.of("JAVA_TOOL_OPTIONS", "-Xshare:off");
        Start first = start(noSharing);
        assertTrue(first.output.contains("could not record the class archive"), first.output);
        assertTrue(first.output.contains("DynamicDumpSharedSpaces is unsupported"),
                "the recording's own output, which says why: " + first.output);

        Start second = start(noSharing);
        assertFalse(second.output.contains(RECORDING), "tried again: " + second.output);
        assertTrue(second.output.contains("recording it failed for this jar"), second.output);
        assertFalse(second.classes.contains("source: shared objects file (top)"), "no archive, so none used");
    }

    @Test
    void aJarInADirectoryTheUserCannotWriteToStartsWithoutAnArchive() throws Exception {
        Path jarDirectory = jar.getParent();
        Files.setPosixFilePermissions(jarDirectory, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            assumeFalse(Files.isWritable(jarDirectory), "the user (root) writes to a read-only directory anyway");
            Start start = start(Map.of());
            assertTrue(start.output.contains("starting without a class archive: cannot write to " + jarDirectory),
                    start.output);
            assertFalse(Files.exists(jar.resolveSibling("eventhandler.jsa")));
        } finally {
            Files.setPosixFilePermissions(jarDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    /** What a start of the script printed, and where its JVM took each class from. */
    private record Start(String output, String classes) {
    }

    /**
     * Runs the script as a user does, on the jar copy and a free port, until it listens, and stops it. The
     * first start after a build records the archive first, a start of its own, hence the long wait.
     */
    private Start start(Map<String, String> environment) throws Exception {
        Path classLog = directory.resolve("classes-" + ++starts + ".log");
        ProcessBuilder command = new ProcessBuilder("bash", SCRIPT.toString(), "--server.port=0",
                "--server.host=127.0.0.1").directory(directory.toFile()).redirectErrorStream(true);
        Map<String, String> env = command.environment();
        // Options a machine may set that change what the JVM shares, and the script's own settings.
        env.keySet().removeIf(name -> name.startsWith("EH_") || name.startsWith("EVENTHANDLER_")
                || name.equals("JAVA_TOOL_OPTIONS") || name.equals("JDK_JAVA_OPTIONS") || name.equals("_JAVA_OPTIONS"));
        env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + File.pathSeparator + env.get("PATH"));
        env.put("EVENTHANDLER_JAR", jar.toString());
        env.put("JAVA_OPTS", "-XX:+UseSerialGC -Xlog:class+load=info:file=" + classLog);
        env.putAll(environment);
        try (ServerProcess server = ServerProcess.start(command)) {
            server.await(LISTENING, 240);
            server.terminate();
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS), "the server did not stop");
            assertEquals(0, server.process().exitValue(), server.output());
            return new Start(server.output(), Files.readString(classLog));
        }
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13, a faster start: {@code scripts/eventhandler} records the classes a start loads into an archive
 * beside the jar once per build, and starts map them from it (class-data sharing).
 */
class ClassArchiveIT {
    private static final Path SCRIPT = Path.of("../scripts/eventhandler").toAbsolutePath().normalize();
    private static final Path ARCHIVE = Path.of(System.getProperty("eventhandler.jar")).resolveSibling("eventhandler.jsa");

    @Test
    void theScriptRecordsTheClassesOfAStartOnceAndLaterStartsLoadThemFromTheArchive(@TempDir Path directory)
            throws Exception {
        Files.deleteIfExists(ARCHIVE);
        Path firstClasses = directory.resolve("first-classes.log");
        try (ServerProcess first = ServerProcess.start(script(directory, firstClasses))) {
            first.awaitListening();
            assertTrue(first.output().contains("recording the classes a start loads"), first.output());
            assertTrue(Files.size(ARCHIVE) > 0, "no archive at " + ARCHIVE);
            stop(first);
        }
        assertTrue(Files.readString(firstClasses).contains("org.hibernate.internal.SessionFactoryImpl source: shared"
                + " objects file (top)"), "the server's start used the archive it had just recorded");

        Path secondClasses = directory.resolve("second-classes.log");
        try (ServerProcess second = ServerProcess.start(script(directory, secondClasses))) {
            second.awaitListening();
            assertFalse(second.output().contains("recording the classes"), "recorded again: " + second.output());
            stop(second);
        }
        assertTrue(Files.readString(secondClasses).contains("source: shared objects file (top)"));
    }

    /** The script as a user runs it, on a free port, logging where each class came from. */
    private static ProcessBuilder script(Path directory, Path classLog) {
        ProcessBuilder command = new ProcessBuilder("bash", SCRIPT.toString(), "--server.port=0",
                "--server.host=127.0.0.1").directory(directory.toFile()).redirectErrorStream(true);
        command.environment().keySet().removeIf(name -> name.startsWith("EH_") || name.startsWith("EVENTHANDLER_"));
        command.environment().put("JAVA_OPTS", "-XX:+UseSerialGC -Xlog:class+load=info:file=" + classLog);
        return command;
    }

    private static void stop(ServerProcess server) throws InterruptedException {
        server.terminate();
        assertTrue(server.process().waitFor(30, TimeUnit.SECONDS), "the server did not stop");
        assertEquals(0, server.process().exitValue(), server.output());
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way the start can fail, with the runnable jar as users run it: the process ends with its exit code
 * (1, or 2 for a configuration error) and says why in exactly one line, no stack trace and no other warning.
 * (A data directory that is not writable is not here: the tests run as root, whom no permission stops; the
 * check behind it is the same as that of a directory that cannot be made.)
 */
class StartFailureIT {
    /** A log line of INFO or DEBUG, or a line of the effective configuration that the start prints first. */
    private static final Pattern EXPECTED_NOISE = Pattern.compile("^\\S+ (INFO|DEBUG) .*|^  \\S+=.*|^$");

    @TempDir
    Path dir;

    @Test
    void aPortInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            assertOneLine(1, "cannot listen on 127.0.0.1:" + taken.getLocalPort() + ": Address already in use",
                    "--server.host=127.0.0.1", "--server.port=" + taken.getLocalPort(), "--store.mode=off");
        }
    }

    @Test
    void aConfigFileThatDoesNotExist() throws Exception {
        assertOneLine(2, "config file missing.properties does not exist or cannot be read",
                "--config=missing.properties");
    }

    @Test
    void aConfigFileThatIsADirectory() throws Exception {
        Files.createDirectory(dir.resolve("conf.properties"));
        assertOneLine(2, "conf.properties", "--config=conf.properties");
    }

    @Test
    void aBadValueInTheConfigFile() throws Exception {
        Files.writeString(dir.resolve("bad.properties"), "server.port=eighty\n");
        assertOneLine(2, "'server.port' has the value 'eighty'", "--config=bad.properties");
    }

    @Test
    void aKeyStoreThatDoesNotExist() throws Exception {
        assertOneLine(2, "the key store " + dir.resolve("none.p12") + " does not exist",
                secure("server.ssl.key-store", dir.resolve("none.p12").toString()));
    }

    @Test
    void aKeyStoreWithAnotherPassword() throws Exception {
        assertOneLine(2, "key store", secure("server.ssl.key-store-password", "wrong"));
    }

    /** Issue 29's shape: 35-40 lines of H2's stack trace before this. */
    @Test
    void aDataDirectoryThatIsARegularFile() throws Exception {
        Files.writeString(dir.resolve("data"), "a file where the data directory should be");
        assertOneLine(1, dir.resolve("data") + " is a file, not a directory", "--server.port=0",
                "--store.id-mark-file=" + dir.resolve("ids"));
    }

    @Test
    void aDataDirectoryThatIsARegularFileOnTheDefaults() throws Exception {
        Files.writeString(dir.resolve("data"), "a file where the data directory should be");
        assertOneLine(1, "cannot be opened", "--server.port=0");
    }

    @Test
    void aDataDirectoryThatCannotBeMade() throws Exception {
        assertOneLine(1, "its directory /proc/eventhandler-data cannot be made", "--server.port=0",
                "--store.url=jdbc:h2:file:/proc/eventhandler-data/log", "--store.id-mark-file=" + dir.resolve("ids"));
    }

    @Test
    void anUnreachableDatabase() throws Exception {
        String url = "jdbc:mysql://127.0.0.1:" + TestServer.portNoConnectionTakes() + "/nothing";
        assertOneLine(1, "the event store at " + url + " cannot be opened", "--server.port=0", "--store.url=" + url,
                "--store.timeout-seconds=2");
    }

    @Test
    void noNatsServer() throws Exception {
        int port = TestServer.portNoConnectionTakes();
        assertOneLine(1, "no NATS server of cluster.nats-urls (nats://127.0.0.1:" + port + ") answered",
                "--server.port=0", "--cluster.enabled=true", "--cluster.nats-urls=nats://127.0.0.1:" + port,
                "--cluster.node-name=lonely", "--cluster.timeout-seconds=1");
    }

    /** The arguments of a secure start, with one setting changed. */
    private static String[] secure(String key, String value) {
        String[] settings = TestPki.get().serverSettings();
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--store.mode=off"));
        for (int i = 0; i < settings.length; i += 2) {
            args.add("--" + settings[i] + "=" + (settings[i].equals(key) ? value : settings[i + 1]));
        }
        return args.toArray(String[]::new);
    }

    private void assertOneLine(int exitCode, String cause, String... args) throws Exception {
        try (ServerProcess server = ServerProcess.start(dir, args)) {
            assertTrue(server.process().waitFor(90, TimeUnit.SECONDS), "the start did not end: " + server.output());
            assertEquals(exitCode, server.process().exitValue(), server.output());
            // The reader thread may not have read the last line yet when the process has ended.
            server.await(Pattern.compile("not started"), 10);
            List<String> said = Arrays.stream(server.output().split("\n"))
                    .filter(line -> !EXPECTED_NOISE.matcher(line).matches()).toList();
            assertEquals(1, said.size(), "one line, not:\n" + String.join("\n", said));
            assertTrue(said.get(0).matches("^\\S+ ERROR .* not started: .*") && said.get(0).contains(cause),
                    "'" + said.get(0) + "' should name '" + cause + "'");
        }
    }
}

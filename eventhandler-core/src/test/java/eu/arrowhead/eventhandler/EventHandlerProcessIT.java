package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable jar as users run it: a separate process, stopped by a signal. */
class EventHandlerProcessIT {

    @Test
    void onItsDefaultsItLogsToH2UnderDataAndSigtermStopsItWithExitCodeZero(@TempDir Path workingDirectory)
            throws Exception {
        try (ServerProcess server = ServerProcess.start(workingDirectory, "--server.port=0", "--server.host=127.0.0.1")) {
            URI base = server.awaitListening();
            HttpResponse<String> echo = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(base.resolve("/eventhandler/echo")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals("Got it!", echo.body());
            assertTrue(Files.exists(workingDirectory.resolve("data/eventhandler.mv.db")),
                    "the embedded event store is created under data/");

            server.terminate();
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS), "the server did not stop");
            assertEquals(0, server.process().exitValue(), server.output());
            server.await(Pattern.compile("event store closed cleanly"), 10);
            server.await(Pattern.compile("INFO .* stopped"), 10);
        }
    }

    @Test
    void aConfigurationErrorStopsTheStartWithExitCodeTwoNamingTheKey(@TempDir Path workingDirectory) throws Exception {
        try (ServerProcess server = ServerProcess.start(workingDirectory, "--server.prot=1")) {
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(2, server.process().exitValue());
            server.await(Pattern.compile("unknown configuration key 'server.prot'"), 5);
        }
    }

    @Test
    void aBadEnvironmentValueIsNamedToo(@TempDir Path workingDirectory) throws Exception {
        ProcessBuilder command = ServerProcess.command(workingDirectory, "--server.host=127.0.0.1");
        command.environment().put("EH_SERVER_PORT", "eighty");
        try (ServerProcess server = ServerProcess.start(command)) {
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(2, server.process().exitValue());
            server.await(Pattern.compile("'server.port' has the value 'eighty'"), 5);
        }
    }

    @Test
    void anUnreachableDatabaseStopsTheStartWithAClearMessage(@TempDir Path workingDirectory) throws Exception {
        try (ServerProcess server = ServerProcess.start(workingDirectory, "--server.port=0",
                "--store.url=jdbc:mysql://127.0.0.1:1/nothing", "--store.timeout-seconds=2")) {
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
            assertEquals(1, server.process().exitValue());
            server.await(Pattern.compile("event store at jdbc:mysql://127.0.0.1:1/nothing cannot be opened"), 5);
        }
    }
}

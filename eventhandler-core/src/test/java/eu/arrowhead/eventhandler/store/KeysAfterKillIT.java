package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A publisher whose answer was lost retries with the same {@code Idempotency-Key} after the server was killed
 * (SIGKILL) and started again on the same H2 file: the key was committed with its events, so the retry gets the
 * first ids and the log holds each event once; another request under the key is a 422. In async mode this holds
 * for what was written before the kill (the test waits for it); what was not is lost with its key.
 * (Before the keys were kept in the log the retry published the events again under new ids.)
 */
class KeysAfterKillIT {
    private static final String EVENT = "{\"eventType\":\"killed\",\"payload\":\"once\"}";
    private static final String BATCH = "[{\"eventType\":\"killed\",\"payload\":\"b0\"},"
            + "{\"eventType\":\"killed\",\"payload\":\"b1\"}]";

    @TempDir
    Path workingDirectory;

    @ParameterizedTest
    @ValueSource(strings = {"sync", "async"})
    void aRetryAfterAKillGetsTheFirstIds(String mode) throws Exception {
        try (H2Database database = new H2Database()) {
            String[] args = EventLoad.serverArguments(database, "--store.mode=" + mode);
            String[] first;
            String[] firstBatch;
            try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
                URI base = server.awaitListening();
                first = EventLoad.post(base, "/eventhandler/publish", EVENT, "kill-key");
                firstBatch = EventLoad.post(base, "/eventhandler/publish/batch", BATCH, "kill-batch");
                assertEquals("200", first[0], first[1]);
                assertEquals("200", firstBatch[0], firstBatch[1]);
                EventLoad.awaitWritten(base);
                server.kill();
            }
            try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
                URI base = server.awaitListening();
                assertArrayEquals(first, EventLoad.post(base, "/eventhandler/publish", EVENT, "kill-key"));
                assertArrayEquals(firstBatch, EventLoad.post(base, "/eventhandler/publish/batch", BATCH,
                        "kill-batch"));
                String[] other = EventLoad.post(base, "/eventhandler/publish", EVENT.replace("once", "other"),
                        "kill-key");
                assertEquals("422", other[0], other[1]);
                List<Long> logged = EventLogClient.loggedIds(base);
                assertEquals(3, logged.size(), "the log holds " + logged);
                server.terminate();
                assertTrue(server.process().waitFor(60, TimeUnit.SECONDS), "the server stopped");
            }
        }
    }
}

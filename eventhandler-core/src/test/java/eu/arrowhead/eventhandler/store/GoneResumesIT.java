package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.SseStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hundreds of subscribers ask to resume from the start of a large log and go away before their turn, as clients
 * with a read timeout do: their pages are not read for nobody, so a resume that comes after them is served in a
 * few seconds, not after all of theirs. (Such reads went on for minutes, and every new resume waited behind them.)
 */
class GoneResumesIT {
    private static final String TYPE = "gone";
    private static final int LOGGED = 100_000;
    private static final int GONE = 300;
    private static final Duration SERVED_WITHIN = Duration.ofSeconds(10);

    @TempDir
    Path workingDirectory;

    @Test
    void resumesWhoseClientsLeftAreNotReadFor() throws Exception {
        try (H2Database database = new H2Database();
             ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory,
                     // All from one address: its share of the readers' queue must not be what is tested here.
                     EventLoad.serverArguments(database, "--store.replay-queue-per-client=" + (GONE + 1))))) {
            URI base = server.awaitListening();
            EventLoad.seed(base, TYPE, LOGGED);
            List<RawSubscriber> gone = new ArrayList<>();
            for (int i = 0; i < GONE; i++) {
                gone.add(RawSubscriber.open(base.getPort(), "?eventType=" + TYPE + "&lastEventId=0", 4096));
            }
            gone.forEach(RawSubscriber::close);

            long start = System.nanoTime();
            HttpClient streams = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            try (SseStream stream = SseStream.open(streams,
                    base.resolve("/eventhandler/events?eventType=" + TYPE + "&lastEventId=0"))) {
                assertEquals("1", stream.nextEvent(SERVED_WITHIN.multipliedBy(6)).id());
            }
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < SERVED_WITHIN.toMillis(), "the resume after them was served after "
                    + tookMillis + " ms");
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
        }
    }
}

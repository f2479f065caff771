package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.SseStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The database loses its newest events behind the server's back, as a restore from an older backup or an emptied
 * file does: the next start names the range it lacks in one line, continues the sequence above every id given
 * before (kept in the id mark, outside the database), and a subscriber resuming across the range is told of it.
 * (Such a start used to continue after the database's own last id, giving acknowledged events' ids to new ones.)
 */
class LostTailIT {
    private static final String TYPE = "tail";
    private static final Pattern LOST = Pattern.compile(
            "the event log ends at id (\\d+) but ids up to (\\d+) were given out");
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path workingDirectory;

    @Test
    void aDatabaseRestoredFromAnOlderCopyNeverMakesTheServerGiveAnIdTwice() throws Exception {
        try (H2Database database = new H2Database()) {
            String[] args = EventLoad.serverArguments(database);
            Path file = databaseFile(database);
            Path backup = workingDirectory.resolve("backup.mv.db");
            publishAndStop(args, 20);
            Files.copy(file, backup);
            List<Long> acknowledged = publishAndStop(args, 30);
            Files.copy(backup, file, StandardCopyOption.REPLACE_EXISTING);

            try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
                Matcher lost = server.await(LOST, 60);
                assertEquals(20, Long.parseLong(lost.group(1)));
                assertEquals(acknowledged.get(acknowledged.size() - 1), Long.parseLong(lost.group(2)));
                URI base = server.awaitListening();
                long next = EventLoad.publish(base, TYPE, "after the restore");
                assertTrue(next > acknowledged.get(acknowledged.size() - 1), "id " + next + " was given before");
                assertResumeIsToldOf(base, 20, 50, next);
                stop(server);
            }
        }
    }

    @Test
    void anEmptiedDatabaseFileNeverMakesTheServerGiveAnIdTwice() throws Exception {
        try (H2Database database = new H2Database()) {
            String[] args = EventLoad.serverArguments(database);
            List<Long> acknowledged = publishAndStop(args, 30);
            Files.write(databaseFile(database), new byte[0]);

            try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
                Matcher lost = server.await(LOST, 60);
                assertEquals(0, Long.parseLong(lost.group(1)));
                assertEquals(30, Long.parseLong(lost.group(2)));
                URI base = server.awaitListening();
                long next = EventLoad.publish(base, TYPE, "after the loss");
                assertTrue(next > acknowledged.get(acknowledged.size() - 1), "id " + next + " was given before");
                assertResumeIsToldOf(base, 0, 30, next);
                stop(server);
            }
        }
    }

    private static Path databaseFile(H2Database database) {
        String url = database.settings().get("store.url");
        String path = url.substring("jdbc:h2:file:".length(), url.indexOf(';'));
        return Path.of(path + ".mv.db");
    }

    /** Starts the server, publishes {@code count} events, stops it cleanly; the ids acknowledged. */
    private List<Long> publishAndStop(String[] args, int count) throws Exception {
        List<Long> ids = new ArrayList<>();
        try (ServerProcess server = ServerProcess.start(workingDirectory, args)) {
            URI base = server.awaitListening();
            for (int i = 0; i < count; i++) {
                ids.add(EventLoad.publish(base, TYPE, "e" + i));
            }
            stop(server);
        }
        return ids;
    }

    /** A resume from 0: the events up to {@code lastKept}, a notice of ({@code lastKept}, {@code lostUpTo}], then {@code next}. */
    private static void assertResumeIsToldOf(URI base, long lastKept, long lostUpTo, long next) throws Exception {
        HttpClient streams = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (SseStream stream = SseStream.open(streams,
                base.resolve("/eventhandler/events?eventType=" + TYPE + "&lastEventId=0"))) {
            for (long id = 1; id <= lastKept; id++) {
                assertEquals(Long.toString(id), stream.nextEvent(WAIT).id());
            }
            ReplayGap gap = stream.nextGapNotice(WAIT);
            assertEquals(lastKept, gap.requestedAfterId());
            assertTrue(gap.resumedAfterId() >= lostUpTo, gap.toString());
            assertEquals(Long.toString(next), stream.nextEvent(WAIT).id());
        }
    }

    private static void stop(ServerProcess server) throws InterruptedException {
        server.terminate();
        assertTrue(server.process().waitFor(60, TimeUnit.SECONDS), "the server stopped");
    }
}

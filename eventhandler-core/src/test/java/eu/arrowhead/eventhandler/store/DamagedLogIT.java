package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.PageEnd;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 64 KiB of garbage in the middle of the H2 log's file, as the issue found it (a bad sector, a stray write): the
 * events whose B-tree page lay there cannot be read. The server used to stay UP and refuse every resume across
 * them with {@code eventhandler.unavailable}, forever. Now the read that reaches them names the exact range in one
 * line, health says DEGRADED with that range, a resume from 0 gets every readable event in order with one gap
 * notice covering the damaged ids, then the rest and live events; publishes go on; a restart names it again.
 *
 * <p>The damage is placed where it hits events' rows ({@link #damageRows}): garbage that lands on free space
 * does nothing, and garbage on an index's pages is not what this test covers (see docs/reliability.md).
 */
class DamagedLogIT {
    private static final String TYPE = "damaged";
    private static final int EVENTS = 20_000;
    private static final int GARBAGE = 64 * 1024;
    private static final Pattern DAMAGED = Pattern.compile(
            "the event log's file is damaged: the events with ids (\\d+)-(\\d+) cannot be read \\(found by ([a-z ]+)\\)");
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path workingDirectory;

    @Test
    void aDamagedStretchOfTheFileIsNamedAndSkippedWithAGapNoticeAndEverythingElseIsServed() throws Exception {
        try (H2Database database = new H2Database()) {
            String[] args = EventLoad.serverArguments(database);
            try (ServerProcess server = start(args)) {
                EventLoad.seed(server.awaitListening(), TYPE, EVENTS);
                stop(server);
            }
            long[] unreadable = damageRows(databaseFile(database));
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

            try (ServerProcess server = start(args)) {
                URI base = server.awaitListening();
                long live = EventLoad.publish(base, TYPE, "after the damage");
                assertTrue(live > EVENTS, "id " + live + " was given before");

                List<String> expected = new ArrayList<>();
                for (long id = 1; id <= EVENTS + 1; id++) {
                    if (id == unreadable[0]) {
                        expected.add("gap " + (id - 1) + "-" + unreadable[1]);
                    }
                    if (id < unreadable[0] || id > unreadable[1]) {
                        expected.add("event " + (id <= EVENTS ? id : live));
                    }
                }
                assertEquals(expected, resumeFromZero(http, base, live));
                Matcher named = server.await(DAMAGED, 60);
                assertEquals(unreadable[0] + "-" + unreadable[1], named.group(1) + "-" + named.group(2));
                assertEquals("a read", named.group(3));
                assertDegraded(http, base, unreadable);

                long later = EventLoad.publish(base, TYPE, "after the resume");
                List<Long> logged = EventLogClient.loggedIds(base);
                assertEquals(EVENTS - (unreadable[1] - unreadable[0] + 1) + 2, logged.size());
                assertEquals(List.of(live, later), logged.subList(logged.size() - 2, logged.size()));
                assertFalse(logged.stream().anyMatch(id -> id >= unreadable[0] && id <= unreadable[1]));
                assertEquals(1, count(server.output(), DAMAGED), "the damage is named once:\n" + server.output());
                stop(server);
                assertFalse(server.output().contains(" ERROR "), server.output());
            }

            try (ServerProcess server = start(args)) {
                Matcher named = server.await(DAMAGED, 60);
                assertEquals(unreadable[0] + "-" + unreadable[1], named.group(1) + "-" + named.group(2));
                assertEquals("the start", named.group(3));
                URI base = server.awaitListening();
                assertDegraded(http, base, unreadable);
                stop(server);
            }
        }
    }

    private ServerProcess start(String[] args) {
        return ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory, args));
    }

    /**
     * Writes 64 KiB of garbage into the file where it makes events' rows unreadable, near the middle: tried on a
     * copy (opened read-only, so that H2 rewrites nothing) at 4 KiB steps outwards from the middle until the
     * garbage hits a page of rows but leaves the index a replay walks whole.
     *
     * @return the first and last id that can no longer be read
     */
    private long[] damageRows(Path file) throws IOException, SQLException {
        long middle = Files.size(file) / 2 / 4096 * 4096;
        Path trial = workingDirectory.resolve("trial.mv.db");
        for (int step = 0; step < 64; step++) {
            long offset = middle + (step % 2 == 0 ? 1 : -1) * (step / 2) * 4096L;
            Files.copy(file, trial, StandardCopyOption.REPLACE_EXISTING);
            writeGarbage(trial, offset);
            Optional<long[]> unreadable = unreadableRows(trial);
            if (unreadable.isPresent()) {
                writeGarbage(file, offset);
                return unreadable.get();
            }
        }
        throw new AssertionError("no place near the middle of " + file + " holds events' rows");
    }

    private static void writeGarbage(Path file, long offset) throws IOException {
        byte[] garbage = new byte[GARBAGE];
        new Random(offset).nextBytes(garbage);
        try (RandomAccessFile out = new RandomAccessFile(file.toFile(), "rw")) {
            out.seek(offset);
            out.write(garbage);
        }
    }

    /** The one run of ids whose rows cannot be read, if there is exactly one and the topic's index is whole. */
    private static Optional<long[]> unreadableRows(Path file) throws SQLException {
        String path = file.toString().substring(0, file.toString().length() - ".mv.db".length());
        try (Connection connection = DriverManager.getConnection("jdbc:h2:file:" + path
                + ";ACCESS_MODE_DATA=r;IFEXISTS=TRUE", "sa", "");
             PreparedStatement readOne = connection.prepareStatement("SELECT event_json FROM eh_event WHERE id = ?")) {
            try (ResultSet ids = connection.createStatement().executeQuery(
                    "SELECT COUNT(id) FROM eh_event WHERE topic_key = '" + TYPE + "' AND id > 0")) {
                ids.next();
            } catch (SQLException e) {
                return Optional.empty();
            }
            long first = -1;
            long last = -1;
            for (long id = 1; id <= EVENTS; id++) {
                readOne.setLong(1, id);
                try (ResultSet row = readOne.executeQuery()) {
                    row.next();
                    row.getString(1);
                } catch (SQLException e) {
                    if (last >= 0 && last != id - 1) {
                        return Optional.empty();
                    }
                    first = first < 0 ? id : first;
                    last = id;
                }
            }
            return first > 1 && last < EVENTS ? Optional.of(new long[] {first, last}) : Optional.empty();
        } catch (SQLException e) {
            // The copy does not even open: not the damage this test is about.
            return Optional.empty();
        }
    }

    /**
     * A resume from 0 through the whole log, one page after another as a client reconnects, written down as lines
     * ({@link ResumeTranscript}); ends with the event {@code lastId}.
     */
    private static List<String> resumeFromZero(HttpClient http, URI base, long lastId) throws InterruptedException {
        List<String> lines = new ArrayList<>();
        String resumeFrom = "0";
        for (int connection = 0; connection < 100; connection++) {
            try (SseStream stream = SseStream.open(http,
                    base.resolve("/eventhandler/events?eventType=" + TYPE + "&lastEventId=" + resumeFrom))) {
                while (true) {
                    Frame frame = stream.nextEvent(WAIT);
                    if (PageEnd.EVENT_TYPE.equals(frame.event())) {
                        resumeFrom = frame.id();
                        continue;
                    }
                    lines.add(ResumeTranscript.line(frame));
                    if (frame.id() != null) {
                        resumeFrom = frame.id();
                    }
                    if (Long.toString(lastId).equals(frame.id())) {
                        return lines;
                    }
                }
            } catch (SseStream.StreamEndedException pageEnded) {
                // the next page, from where this one ended
            }
        }
        throw new AssertionError("the resume did not reach " + lastId + " in 100 connections: " + lines.size()
                + " frames, the last " + lines.get(lines.size() - 1));
    }

    private static void assertDegraded(HttpClient http, URI base, long[] unreadable) throws Exception {
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(base.resolve("/eventhandler/mgmt/health"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(503, health.statusCode(), health.body());
        assertTrue(health.body().contains("\"status\":\"DEGRADED\""), health.body());
        assertTrue(health.body().contains("ids " + unreadable[0] + "-" + unreadable[1] + " cannot be read"),
                health.body());
        assertTrue(health.body().contains("\"damagedRanges\":[\"" + unreadable[0] + "-" + unreadable[1] + "\"]"),
                health.body());
    }

    private static Path databaseFile(H2Database database) {
        String url = database.settings().get("store.url");
        return Path.of(url.substring("jdbc:h2:file:".length(), url.indexOf(';')) + ".mv.db");
    }

    private static int count(String text, Pattern pattern) {
        Matcher matcher = pattern.matcher(text);
        int found = 0;
        while (matcher.find()) {
            found++;
        }
        return found;
    }

    private static void stop(ServerProcess server) throws InterruptedException {
        server.terminate();
        assertTrue(server.process().waitFor(60, TimeUnit.SECONDS), "the server stopped");
    }
}

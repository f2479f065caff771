package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code SIGTERM} while hundreds of subscribers resume from the start of a large log and {@code mgmt/events} pages are
 * read, at the smallest heap: every publish acknowledged before the stop is in the log after the restart, the stop
 * records itself as clean, and no id is given twice. (An interrupt that reached a thread inside H2's file I/O used to
 * close its file under the writer: acknowledged events were lost and their ids given again.)
 */
class StopDuringReadsIT {
    private static final String TYPE = "flood";
    private static final int LOGGED = 100_000;
    /** Within {@code subscriber.max-count} at {@code -Xmx64m} (264), so that every one of them is served. */
    private static final int RESUMING = 250;
    private static final int QUERY_LOOPS = 4;
    private static final int ACKNOWLEDGED = 20;
    private static final Pattern STOPPED_CLEANLY = Pattern.compile("event store closed cleanly after id (\\d+)");
    private static final Pattern SEQUENCE_START = Pattern.compile("the sequence continues after (\\d+)");

    @TempDir
    Path workingDirectory;

    @Test
    void aStopDuringReadsKeepsEveryAcknowledgedEventOnH2InAsyncMode() throws Exception {
        try (H2Database database = new H2Database()) {
            stopDuringReads(database, "async");
        }
    }

    @Test
    void aStopDuringReadsKeepsEveryAcknowledgedEventOnH2InSyncMode() throws Exception {
        try (H2Database database = new H2Database()) {
            stopDuringReads(database, "sync");
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = MariaDbDatabase.URL_VARIABLE, matches = ".+")
    void aStopDuringReadsKeepsEveryAcknowledgedEventOnMariaDb() throws Exception {
        try (MariaDbDatabase database = new MariaDbDatabase()) {
            stopDuringReads(database, "async");
        }
    }

    private void stopDuringReads(TestDatabase database, String mode) throws Exception {
        String[] arguments = EventLoad.serverArguments(database, "--store.mode=" + mode);

        Set<Long> acknowledged = new HashSet<>();
        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory, arguments));
             ReadFlood flood = new ReadFlood()) {
            URI base = server.awaitListening();
            EventLoad.seed(base, TYPE, LOGGED);
            flood.start(base, TYPE, RESUMING, QUERY_LOOPS);
            for (int i = 0; i < ACKNOWLEDGED; i++) {
                acknowledged.add(EventLoad.publish(base, TYPE, "after the flood began " + i));
            }
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS), "the stop ended within its bound");
            String output = server.output();
            assertFalse(output.contains("ClosedChannelException"), output);
            assertFalse(output.contains("could not record the clean stop"), output);
            long lastAcknowledged = acknowledged.stream().mapToLong(Long::longValue).max().orElseThrow();
            var clean = STOPPED_CLEANLY.matcher(output);
            assertTrue(clean.find(), "the stop was recorded as clean:\n" + output);
            assertEquals(lastAcknowledged, Long.parseLong(clean.group(1)));
            assertTrue(flood.pagesRead() > 0, "the flood's queries were being answered");
        }

        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory, arguments))) {
            long start = Long.parseLong(server.await(SEQUENCE_START, 60).group(1));
            URI base = server.awaitListening();
            // Every acknowledged id came after the seed: the log is read back from the first of them.
            long firstAcknowledged = acknowledged.stream().mapToLong(Long::longValue).min().orElseThrow();
            List<Long> logged = EventLogClient.loggedIdsAfter(base, firstAcknowledged - 1);
            Set<Long> missing = new HashSet<>(acknowledged);
            logged.forEach(missing::remove);
            assertEquals(Set.of(), missing, "acknowledged before the stop but not in the log after it");
            long lastAcknowledged = acknowledged.stream().mapToLong(Long::longValue).max().orElseThrow();
            assertTrue(start >= lastAcknowledged, "the sequence continues after " + start);
            assertTrue(EventLoad.publish(base, TYPE, "after the restart") > lastAcknowledged, "no id is given twice");
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
        }
    }

    /** Resuming subscribers that never read, and loops of {@code mgmt/events} pages, until closed. */
    static final class ReadFlood implements AutoCloseable {
        private final List<RawSubscriber> subscribers = new ArrayList<>();
        private final List<Thread> loops = new ArrayList<>();
        private volatile boolean running = true;
        private volatile int pagesRead;

        void start(URI base, String type, int resuming, int queryLoops) {
            for (int i = 0; i < resuming; i++) {
                subscribers.add(RawSubscriber.open(base.getPort(), "?eventType=" + type + "&lastEventId=0", 4096));
            }
            for (int i = 0; i < queryLoops; i++) {
                Thread loop = new Thread(() -> {
                    while (running) {
                        try {
                            if (EventLoad.query(base, "/eventhandler/mgmt/events?eventType=" + type + "&limit=1000")
                                    == 200) {
                                pagesRead++;
                            }
                        } catch (Exception e) {
                            return;
                        }
                    }
                }, "mgmt-events-loop-" + i);
                loop.setDaemon(true);
                loop.start();
                loops.add(loop);
            }
        }

        int pagesRead() {
            return pagesRead;
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            for (RawSubscriber subscriber : subscribers) {
                subscriber.close();
            }
            for (Thread loop : loops) {
                loop.join(Duration.ofSeconds(30).toMillis());
            }
        }
    }
}

package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * Reliability mode crash (issue 12, finding 9): {@code kill -9} in a loop while four publishers publish at
 * a steady rate, per store mode (async, sync) and database (H2, and MySQL/MariaDB when given), each row on
 * an empty log. After each restart one more event is published (the marker: its id shows where the
 * sequence went on), a subscriber resumes from id 0 through the whole log to the marker, collecting the
 * replay-gap notices, and every event acknowledged so far is looked up in the log ({@link AcknowledgedAudit}):
 * in sync mode each must be there; in async mode one that is not must lie in an announced hole, or it is
 * lost without anyone being told.
 */
final class CrashLoop {
    static final String EVENT_TYPE = "reliability.crash";
    private static final int PUBLISHERS = 4;
    private static final int DEFAULT_RATE = 1250;
    private static final int DEFAULT_SECONDS = 5;
    private static final List<String> MODES = List.of("async", "sync");
    private static final Duration FIRST_PUBLISH_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(50);
    private static final Duration MARKER_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MARKER_RETRY = Duration.ofMillis(200);
    private static final Duration REPLAY_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofMinutes(2);
    private static final List<String> COLUMNS = List.of("store mode", "database", "kills", "acknowledged", "in log",
            "lost", "announced missing", "replay skipped logged events", "replay out of order", "events/s",
            "publishes without answer", "lost per kill", "ids skipped per restart", "first lost ids");
    private static final List<String> KILL_COLUMNS = List.of("store mode", "database", "kill",
            "acknowledged in the round", "last acknowledged id", "first id after restart", "ids skipped",
            "lost (new)", "announced missing (new)", "gap notices in the replay", "replay streams",
            "replay reached the marker");

    private CrashLoop() {
    }

    static Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        List<List<Object>> rows = new ArrayList<>();
        List<List<Object>> killRows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (String mode : MODES) {
            try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-crash-")) {
                Row row = new Row(options, mode, "H2", StoreSettings.h2(directory), directory.path(), serverLog);
                row.run(rows, killRows, failures);
            }
        }
        if (options.mysqlUrl() != null) {
            for (String mode : MODES) {
                try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-crash-")) {
                    LogTables.drop(options.mysqlUrl(), options.mysqlUser());
                    new Row(options, mode, "MariaDB", StoreSettings.database(options.mysqlUrl(), options.mysqlUser()),
                            directory.path(), serverLog).run(rows, killRows, failures);
                } catch (SQLException e) {
                    failures.add("the database " + options.mysqlUrl() + " cannot be reset, its rows did not run: "
                            + e.getMessage().lines().findFirst().orElse(e.toString()));
                    break;
                }
            }
        }
        return new Scenario.Result(List.of(new ResultTable("crash", COLUMNS, rows),
                new ResultTable("crash-kills", KILL_COLUMNS, killRows)), failures);
    }

    /** One store mode on one database: a server killed and restarted {@code --kills} times. */
    private static final class Row {
        private final String mode;
        private final String database;
        private final String label;
        private final int kills;
        private final int rate;
        private final Duration publishing;
        private final ServerJvm.Spec spec;
        private final List<long[]> acknowledged = new ArrayList<>();
        private final List<Long> lostPerKill = new ArrayList<>();
        private final List<Long> skips = new ArrayList<>();
        private long publishedEvents;
        private long publishingNanos;
        private long unanswered;

        Row(ReliabilityOptions options, String mode, String database, Map<String, String> store, Path directory,
            Path serverLog) {
            this.mode = mode;
            this.database = database;
            this.label = "crash " + mode + " " + database;
            this.kills = options.kills();
            this.rate = options.rateOr(DEFAULT_RATE);
            this.publishing = Duration.ofSeconds(options.secondsOr(DEFAULT_SECONDS));
            this.spec = new ServerJvm.Spec(options.serverJar(), options.heapOr(null),
                    options.settings(StoreSettings.inMode(mode, store)), directory, serverLog);
        }

        void run(List<List<Object>> rows, List<List<Object>> killRows, List<String> failures) {
            AcknowledgedAudit audit = null;
            try (ServerJvm server = ServerJvm.start(spec)) {
                Reliability.say(label, "server pid " + server.pid() + " at " + server.baseUri() + "; " + kills
                        + " kills, each after " + publishing.toSeconds() + " s of " + PUBLISHERS + " publishers at "
                        + rate + " events/s");
                long lost = 0;
                long announced = 0;
                for (int kill = 1; kill <= kills; kill++) {
                    SustainedPublish.Result round = publishAndKill(server);
                    long lastAcknowledged = acknowledgedSoFar().max().orElse(0);
                    server.restart();
                    long marker = marker(server.baseUri());
                    skips.add(marker - lastAcknowledged - 1);
                    LogReplay.Result replay = LogReplay.read(server.baseUri(), EVENT_TYPE, marker, REPLAY_TIMEOUT);
                    audit = audit(server, replay);
                    lostPerKill.add(audit.lost() - lost);
                    killRows.add(Arrays.asList(mode, database, kill, round.accepted(), lastAcknowledged, marker,
                            marker - lastAcknowledged - 1, audit.lost() - lost, audit.announcedMissing() - announced,
                            replay.gaps().size(), replay.connections(), replay.reached() ? "yes" : "no"));
                    Reliability.say(label, "kill " + kill + ": " + round.accepted() + " acknowledged in the round;"
                            + " the sequence went on from " + lastAcknowledged + " at " + marker + "; lost so far "
                            + audit.lost() + ", announced missing " + audit.announcedMissing() + "; the replay took "
                            + replay.connections() + " streams with " + replay.gaps().size() + " gap notices"
                            + (replay.problem() == null ? "" : " (" + replay.problem() + ")"));
                    if (!replay.reached()) {
                        failures.add(label + ", kill " + kill + ": the replay from 0 did not reach id " + marker
                                + " within " + REPLAY_TIMEOUT.toSeconds() + " s"
                                + (replay.problem() == null ? "" : ": " + replay.problem()));
                    }
                    lost = audit.lost();
                    announced = audit.announcedMissing();
                }
            }
            judge(audit, failures);
            rows.add(Arrays.asList(mode, database, kills, audit.acknowledged(), audit.inLog(), audit.lost(),
                    audit.announcedMissing(), audit.replaySkipped(), audit.replayDisordered(),
                    ResultTable.perSecond(publishedEvents, publishingNanos), unanswered, joined(lostPerKill),
                    joined(skips), audit.firstLost().isEmpty() ? null : joined(audit.firstLost())));
        }

        /**
         * Publishes for the round's time from the first acknowledged publish on (a server just started
         * answers its first requests slowly), then kills the server while the publishers still publish.
         */
        private SustainedPublish.Result publishAndKill(ServerJvm server) {
            long started = System.nanoTime();
            SustainedPublish.Running running = SustainedPublish.start(server.baseUri(),
                    new SustainedPublish.Load(EVENT_TYPE, PUBLISHERS, 1, rate, true));
            Deadline.in(FIRST_PUBLISH_TIMEOUT, "the first acknowledged publish").await(() -> running.accepted() > 0,
                    () -> { }, POLL);
            Deadline.in(publishing, "the round").await(() -> false, () -> { }, POLL);
            server.kill();
            publishingNanos += System.nanoTime() - started;
            SustainedPublish.Result round = running.stop();
            acknowledged.add(round.ids());
            publishedEvents += round.accepted();
            unanswered += round.unanswered();
            return round;
        }

        /** Publishes one event into the restarted server, retrying while it refuses; returns its id. */
        private long marker(URI base) {
            byte[] body = HttpPublisher.body(EVENT_TYPE, "marker");
            Deadline deadline = Deadline.in(MARKER_TIMEOUT, "the restarted server to accept a publish");
            String last = null;
            try (HttpPublisher publisher = new HttpPublisher(base, false)) {
                while (!deadline.passed()) {
                    try {
                        HttpPublisher.Answer answer = publisher.send(body);
                        if (answer.accepted()) {
                            acknowledged.add(answer.ids());
                            return answer.ids()[0];
                        }
                        last = answer.code() + " " + answer.refusal();
                    } catch (BenchException e) {
                        last = e.getMessage();
                    }
                    Deadline.in(MARKER_RETRY, "the next try").await(() -> false, () -> { });
                }
            }
            throw new BenchException(label + ": the restarted server accepted no publish within "
                    + MARKER_TIMEOUT.toSeconds() + " s: " + last);
        }

        /** Waits until the store has written the marker, then holds every acknowledged id against the log. */
        private AcknowledgedAudit audit(ServerJvm server, LogReplay.Result replay) {
            long[] all = acknowledgedSoFar().toArray();
            try (StoreProbe probe = new StoreProbe(server.baseUri())) {
                long last = LongStream.of(all).max().orElse(0);
                if (!probe.awaitWritten(last, Deadline.in(CATCH_UP_TIMEOUT, "the log"), label)) {
                    throw new BenchException(label + ": the log did not reach id " + last + " within "
                            + CATCH_UP_TIMEOUT.toSeconds() + " s of the restart");
                }
                return AcknowledgedAudit.of(all, probe.logged(), replay.gaps(), replay.ids(), "async".equals(mode));
            }
        }

        private LongStream acknowledgedSoFar() {
            return acknowledged.stream().flatMapToLong(LongStream::of);
        }

        private void judge(AcknowledgedAudit audit, List<String> failures) {
            if (audit.lost() > 0) {
                failures.add(label + ": " + audit.lost() + " of " + audit.acknowledged() + " acknowledged events are"
                        + " not in the log" + ("async".equals(mode) ? " and no replay-gap notice announced them" : "")
                        + ", the first ids " + audit.firstLost());
            }
            if (audit.replaySkipped() > 0 || audit.replayDisordered() > 0) {
                failures.add(label + ": the replay from 0 skipped " + audit.replaySkipped() + " events the log holds"
                        + (audit.firstSkipped().isEmpty() ? "" : ", the first ids " + audit.firstSkipped())
                        + ", and delivered " + audit.replayDisordered() + " out of order or twice");
            }
        }
    }

    private static String joined(List<Long> numbers) {
        return numbers.stream().map(String::valueOf).collect(Collectors.joining(" "));
    }
}

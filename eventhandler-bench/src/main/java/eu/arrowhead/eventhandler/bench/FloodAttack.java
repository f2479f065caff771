package eu.arrowhead.eventhandler.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Reliability mode flood (issue 12, finding 7): four connections post valid batches of 1 000 events as
 * fast as the server answers, into a server with a 64 MiB heap and an async event store. A server that
 * holds answers 200 while its store keeps up and 503 when it cannot (backpressure), stays up, and its log
 * then holds every event it acknowledged. Whether it did is what the mode reports: answers by status,
 * whether the server still answers and printed no {@code OutOfMemoryError}, and every acknowledged id
 * looked up in the log (after a restart on the same store if the server died), with the events the store
 * counted as dropped from it.
 */
final class FloodAttack {
    static final String EVENT_TYPE = "reliability.flood";
    private static final int CONNECTIONS = 4;
    private static final int BATCH = 1000;
    private static final int DEFAULT_SECONDS = 30;
    private static final String DEFAULT_HEAP = "64m";
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofMinutes(5);
    private static final String DROPPED = "eventhandler_store_dropped_events_total";
    private static final String OUT_OF_MEMORY = "OutOfMemoryError";
    private static final List<String> COLUMNS = List.of("heap", "seconds", "connections", "events per request",
            "answered 200", "answered 503", "answered otherwise", "no answer", "events acknowledged",
            "acknowledged events/s", "echo after", "OutOfMemoryError", "restarted to read the log",
            "log catch-up s", "acknowledged missing from the log", "dropped from the log (metric)",
            "first refusal");

    private FloodAttack() {
    }

    static Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        int seconds = options.secondsOr(DEFAULT_SECONDS);
        String heap = options.heapOr(DEFAULT_HEAP);
        List<String> failures = new ArrayList<>();
        try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-flood-");
             ServerJvm server = ServerJvm.start(new ServerJvm.Spec(options.serverJar(), heap,
                     options.settings(StoreSettings.inMode("async", StoreSettings.h2(directory))), directory.path(),
                     serverLog))) {
            Reliability.say("flood", "server pid " + server.pid() + " at " + server.baseUri() + " with -Xmx" + heap
                    + "; " + CONNECTIONS + " connections post batches of " + BATCH + " for " + seconds + " s");
            SustainedPublish.Result flood = flood(server, seconds);
            Reliability.say("flood", "answers " + flood.answers() + ", " + flood.unanswered() + " without answer"
                    + (flood.refusal() == null ? "" : "; the first refusal: " + Reliability.shorten(flood.refusal())));

            HttpProbe.Answer echo = server.echo(ANSWER_TIMEOUT);
            MetricsPage metrics = echo.answered() ? MetricsPage.read(server.baseUri(), ANSWER_TIMEOUT) : null;
            Long dropped = metrics == null ? null : metrics.value(DROPPED);
            boolean outOfMemory = server.logContains(OUT_OF_MEMORY);
            Reliability.say("flood", "after the flood echo got " + echo.summary() + "; " + OUT_OF_MEMORY + " "
                    + (outOfMemory ? "in" : "not in") + " the server's output");
            // A JVM after an OutOfMemoryError is not to be trusted (a deployed one exits on it and is
            // restarted): its log is read as the next start finds it.
            boolean restart = echo.status() != 200 || outOfMemory;
            if (restart) {
                Reliability.say("flood", "restarting the server on the same event store to read its log");
                server.restart();
            }
            long[] acknowledged = flood.ids().clone();
            Arrays.sort(acknowledged);
            LogCheck log = checkLog(server, acknowledged);

            if (outOfMemory) {
                failures.add("the server ran out of heap (" + OUT_OF_MEMORY + " in its output)");
            }
            if (echo.status() != 200) {
                failures.add("the server did not answer echo after the flood: " + echo.summary());
            }
            long otherwise = flood.refused() - flood.answered(503);
            if (otherwise > 0 || flood.unanswered() > 0) {
                failures.add(otherwise + " requests answered neither 200 nor 503, " + flood.unanswered()
                        + " not answered at all");
            }
            if (log.missing() > 0) {
                failures.add(log.missing() + " of " + acknowledged.length + " acknowledged events are not in the"
                        + " log, the first id " + log.firstMissing());
            }
            if (dropped != null && dropped > 0) {
                failures.add("the store dropped " + dropped + " events from the log");
            }
            List<Object> row = Arrays.asList(heap, seconds, CONNECTIONS, BATCH, flood.answered(200),
                    flood.answered(503), otherwise, flood.unanswered(), flood.accepted(), flood.rate(),
                    echo.answered() ? echo.status() : "none", outOfMemory ? "yes" : "no", restart ? "yes" : "no",
                    log.catchUpSeconds(), log.missing(), dropped, flood.refusal() == null ? null
                            : Reliability.shorten(flood.refusal()));
            return new Scenario.Result(List.of(new ResultTable("flood", COLUMNS, List.of(row))), failures);
        }
    }

    private static SustainedPublish.Result flood(ServerJvm server, int seconds) {
        SustainedPublish.Running running = SustainedPublish.start(server.baseUri(),
                new SustainedPublish.Load(EVENT_TYPE, CONNECTIONS, BATCH, 0, true));
        Deadline end = Deadline.in(Duration.ofSeconds(seconds), "the flood");
        long started = System.nanoTime();
        while (!end.passed()) {
            Deadline.in(PROGRESS_EVERY, "the next progress line").await(end::passed, () -> { }, Duration.ofMillis(100));
            Reliability.say("flood", (System.nanoTime() - started) / 1_000_000_000L + " s: "
                    + running.accepted() + " events acknowledged; server " + (server.running() ? "running" : "exited"));
        }
        return running.stop();
    }

    /**
     * What the log holds of the acknowledged events, once the store has written all it holds.
     *
     * @param catchUpSeconds how long the store took to write what it still held; null if it did not within
     *                       the timeout
     */
    private record LogCheck(Object catchUpSeconds, long missing, Long firstMissing) {
    }

    private static LogCheck checkLog(ServerJvm server, long[] acknowledged) {
        if (acknowledged.length == 0) {
            return new LogCheck(null, 0, null);
        }
        try (StoreProbe probe = new StoreProbe(server.baseUri())) {
            long last = acknowledged[acknowledged.length - 1];
            Reliability.say("flood", "waiting for the log to be written up to id " + last);
            long start = System.nanoTime();
            boolean caughtUp = probe.awaitWritten(last, Deadline.in(CATCH_UP_TIMEOUT, "the log to catch up"),
                    "flood");
            Object catchUp = caughtUp ? ResultTable.seconds(System.nanoTime() - start) : null;
            Reliability.say("flood", "looking up the " + acknowledged.length + " acknowledged events in the log");
            long[] missing = probe.missing(acknowledged);
            return new LogCheck(catchUp, missing.length, missing.length == 0 ? null : missing[0]);
        }
    }
}

package eu.arrowhead.eventhandler.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reliability mode streams (issue 12, finding 6): idle SSE streams, opened on raw sockets as anyone who
 * reaches the port can, up to and past the subscriber limit, into a server with a 64 MiB heap. A server
 * that holds serves as many as its heap holds and refuses the rest (a 503, or a 200 stream that carries
 * the {@value SseFrame#UNAVAILABLE} notice), never runs out of heap, and still answers and delivers
 * afterwards. The mode counts what became of every request, then asks echo, publishes one event to the
 * streams' type and counts the served streams it reached, and reads the server's heap after a full
 * collection.
 */
final class IdleStreamsAttack {
    static final String EVENT_TYPE = "reliability.idle";
    private static final int DEFAULT_COUNT = 3000;
    private static final String DEFAULT_HEAP = "64m";
    private static final int CONNECT_MILLIS = 2000;
    private static final Duration OPEN_TIMEOUT_BASE = Duration.ofSeconds(60);
    private static final Duration OPEN_TIMEOUT_PER_STREAM = Duration.ofMillis(20);
    /** For the answers still missing once every connection is made: a server collecting garbage answers late. */
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(2);
    private static final String SUBSCRIBERS = "eventhandler_subscribers";
    private static final String OUT_OF_MEMORY = "OutOfMemoryError";
    private static final List<String> COLUMNS = List.of("heap", "asked", "connected", "served (open at the end)",
            "served then closed", "refused 503", "refused in stream", "refused otherwise", "closed unanswered",
            "no answer", "broken", "not connected", "served streams that got the event",
            "open streams (metric)", "echo after", "publish after", "OutOfMemoryError",
            "server open files", "first refusal");

    private IdleStreamsAttack() {
    }

    static Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        int count = options.countOr(DEFAULT_COUNT);
        String heap = options.heapOr(DEFAULT_HEAP);
        List<String> failures = new ArrayList<>();
        try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-streams-");
             ServerJvm server = ServerJvm.start(new ServerJvm.Spec(options.serverJar(), heap,
                     options.settings(StoreSettings.inMode("async", StoreSettings.h2(directory))), directory.path(),
                     serverLog))) {
            Reliability.say("streams", "server pid " + server.pid() + " at " + server.baseUri() + " with -Xmx" + heap
                    + "; opening " + count + " idle streams");
            // Once, so that the heap before the streams counts what the first request makes (Jersey, topics).
            HttpProbe.postJson(server.baseUri().resolve("/eventhandler/publish"),
                    HttpPublisher.body(EVENT_TYPE, "warm-up"), ANSWER_TIMEOUT);
            ResourceSnapshot before = server.snapshot();
            StreamCensus census = new StreamCensus(new SseEndpoint(server.baseUri(), EVENT_TYPE));
            List<Object> row;
            ResourceSnapshot after;
            try (SubscriberFleet fleet = SubscriberFleet.start(census)) {
                int connected = open(fleet, census, count);
                Deadline.in(SETTLE_TIMEOUT, "the last answers").await(
                        () -> census.count(StreamCensus.Outcome.WAITING) == 0, () -> { }, POLL);
                Reliability.say("streams", censusLine(census) + "; asking echo and publishing one event");

                HttpProbe.Answer echo = server.echo(ANSWER_TIMEOUT);
                HttpProbe.Answer publish = HttpProbe.postJson(server.baseUri().resolve("/eventhandler/publish"),
                        HttpPublisher.body(EVENT_TYPE, "to every served stream"), ANSWER_TIMEOUT);
                if (publish.status() == 200) {
                    Deadline.in(DELIVERY_TIMEOUT, "the event to reach the served streams").await(
                            () -> census.servedWithEvent() >= census.count(StreamCensus.Outcome.SERVED), () -> { },
                            POLL);
                }
                MetricsPage metrics = echo.answered() ? MetricsPage.read(server.baseUri(), ANSWER_TIMEOUT) : null;
                Reliability.say("streams", "echo " + echo.summary() + "; publish " + publish.summary()
                        + "; reading the server's heap after a full collection");
                after = server.snapshot();
                Long openFiles = server.openFiles();
                boolean outOfMemory = server.logContains(OUT_OF_MEMORY);
                int served = census.count(StreamCensus.Outcome.SERVED);
                int servedThenClosed = census.count(StreamCensus.Outcome.SERVED_THEN_CLOSED);
                int waiting = census.count(StreamCensus.Outcome.WAITING);
                int closedUnanswered = census.count(StreamCensus.Outcome.CLOSED_UNANSWERED);
                int broken = census.count(StreamCensus.Outcome.BROKEN);
                int refusedOtherwise = census.count(StreamCensus.Outcome.REFUSED_OTHERWISE);
                row = Arrays.asList(heap, count, connected, served, servedThenClosed,
                        census.count(StreamCensus.Outcome.REFUSED_503),
                        census.count(StreamCensus.Outcome.REFUSED_IN_STREAM), refusedOtherwise, closedUnanswered,
                        waiting, broken, count - connected, census.servedWithEvent(),
                        metrics == null ? null : metrics.value(SUBSCRIBERS),
                        echo.answered() ? echo.status() : "none", publish.answered() ? publish.status() : "none",
                        outOfMemory ? "yes" : "no", openFiles,
                        census.firstRefusal() == null ? null : Reliability.shorten(census.firstRefusal()));

                if (outOfMemory) {
                    failures.add("the server ran out of heap (" + OUT_OF_MEMORY + " in its output)");
                }
                if (echo.status() != 200 || publish.status() != 200) {
                    failures.add("afterwards echo got " + echo.summary() + ", a publish " + publish.summary());
                }
                if (waiting + closedUnanswered + broken + refusedOtherwise + (count - connected) > 0) {
                    failures.add((count - connected) + " connections not accepted, " + waiting
                            + " requests with no answer, " + closedUnanswered + " closed without one, "
                            + refusedOtherwise + " answered neither 200 nor 503, " + broken + " broken");
                }
                if (servedThenClosed > 0) {
                    failures.add(servedThenClosed + " served streams were closed by the server");
                }
                if (publish.status() == 200 && census.servedWithEvent() < served) {
                    failures.add((served - census.servedWithEvent()) + " of " + served
                            + " served streams did not get the event within " + DELIVERY_TIMEOUT.toSeconds() + " s");
                }
            }
            return new Scenario.Result(List.of(new ResultTable("streams", COLUMNS, List.of(row)),
                    MemoryScenario.resources("streams-server", before, after)), failures);
        }
    }

    /** Makes the connections, with a progress line every few seconds; returns how many were made. */
    private static int open(SubscriberFleet fleet, StreamCensus census, int count) {
        Deadline deadline = Deadline.in(OPEN_TIMEOUT_BASE.plus(OPEN_TIMEOUT_PER_STREAM.multipliedBy(count)),
                count + " connections");
        long[] nextLine = {System.nanoTime() + PROGRESS_EVERY.toNanos()};
        return fleet.connectUpTo(count, deadline, CONNECT_MILLIS, (attempts, connected) -> {
            if (System.nanoTime() - nextLine[0] >= 0) {
                nextLine[0] = System.nanoTime() + PROGRESS_EVERY.toNanos();
                Reliability.say("streams", attempts + " of " + count + " attempted, " + connected + " connected; "
                        + censusLine(census));
            }
        });
    }

    private static String censusLine(StreamCensus census) {
        StringBuilder line = new StringBuilder();
        for (StreamCensus.Outcome outcome : StreamCensus.Outcome.values()) {
            int n = census.count(outcome);
            if (n > 0) {
                line.append(line.isEmpty() ? "" : ", ").append(outcome.name().toLowerCase().replace('_', ' '))
                        .append(' ').append(n);
            }
        }
        return line.isEmpty() ? "no answers yet" : line.toString();
    }
}

package eu.arrowhead.eventhandler.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Scenario M: what N idle subscribers (default 10 000) cost the server (threads, resident memory, heap), and
 * whether one event then reaches all of them and how fast.
 */
final class MemoryScenario {
    private static final String EVENT_TYPE = "bench.idle";
    private static final String WARM_UP_EVENT_TYPE = "bench.idle.warm-up";
    private static final int WARM_UP_EVENTS = 500;
    private static final Duration OPEN_TIMEOUT_BASE = Duration.ofSeconds(30);
    private static final Duration OPEN_TIMEOUT_PER_SUBSCRIBER = Duration.ofMillis(10);
    private static final Duration FAN_OUT_TIMEOUT = Duration.ofSeconds(20);

    private MemoryScenario() {
    }

    static Scenario.Result run(Target target, int subscribers) {
        ResourceSnapshot before;
        ResourceSnapshot after;
        // One event, sequence number 0, published once: every subscriber's log expects it.
        Sends sends = new Sends(1, 1);
        List<DeliveryLog> logs = IntStream.range(0, subscribers).mapToObj(i -> new DeliveryLog(EVENT_TYPE, sends))
                .toList();
        SubscriberFleet fleet = SubscriberFleet.start(new SseFleetProtocol(
                new SseEndpoint(target.baseUri(), EVENT_TYPE),
                logs.stream().<Consumer<SseFrame>>map(log -> log::received).toList()));
        try (fleet; HttpPublisher publisher = new HttpPublisher(target.baseUri(), false)) {
            warmUp(publisher);
            // Taken with the fleet's thread already running, so that the difference is the subscribers.
            before = target.snapshot();
            fleet.open(subscribers, Deadline.in(OPEN_TIMEOUT_BASE.plus(
                    OPEN_TIMEOUT_PER_SUBSCRIBER.multipliedBy(subscribers)), subscribers + " subscribers to open"));
            after = target.snapshot();

            byte[] body = HttpPublisher.body(EVENT_TYPE, "0");
            sends.sent(0, System.nanoTime());
            sends.published(0, publisher.publish(body));
            Progress progress = new Progress("subscribers reached", subscribers);
            // Subscribers the event has not reached by the deadline are reported as lost.
            Deadline.in(FAN_OUT_TIMEOUT, "the event to reach every subscriber").await(
                    () -> logs.stream().allMatch(log -> log.delivered() == 1), () -> {
                        fleet.checkAlive();
                        progress.update(logs.stream().mapToInt(DeliveryLog::delivered).sum());
                    });
        }
        DeliveryLog.Outcome outcome = DeliveryLog.Outcome.sum(logs.stream().map(log -> log.outcome(0)).toList());
        LatencyStats fanOut = LatencyStats.of(outcome.latencyNanos());
        List<String> failures = new ArrayList<>();
        if (!outcome.clean()) {
            failures.add("M: the event to " + subscribers + " subscribers: " + outcome.problems());
        }
        List<Object> fanOutRow = new ArrayList<>(Arrays.asList(subscribers, outcome.delivered(), outcome.lost(),
                outcome.duplicated()));
        fanOutRow.addAll(fanOut.cells());
        List<String> fanOutColumns = List.of("subscribers", "received", "lost", "duplicated", "mean ms", "p50 ms",
                "p90 ms", "p99 ms", "p99.9 ms", "max ms");
        return new Scenario.Result(List.of(resources("M-resources", before, after),
                new ResultTable("M-fan-out", fanOutColumns, List.of(fanOutRow))), failures);
    }
    /**
     * Publishes to a topic nobody subscribes to, so that the measured event does not pay for the server's
     * first request (Jersey initializes lazily) and a cold JIT.
     */
    private static void warmUp(HttpPublisher publisher) {
        byte[] body = HttpPublisher.body(WARM_UP_EVENT_TYPE, "warm-up");
        Progress progress = new Progress("warm-up events published", WARM_UP_EVENTS);
        for (int i = 1; i <= WARM_UP_EVENTS; i++) {
            publisher.publish(body);
            progress.update(i);
        }
    }

    /** A table {@code name} of the server's threads, RSS and heap after a full collection, before and after. */
    static ResultTable resources(String name, ResourceSnapshot before, ResourceSnapshot after) {
        List<List<Object>> rows = List.of(
                row("live threads", before, after, ResourceSnapshot::threads, count -> count),
                row("eh- threads", before, after, ResourceSnapshot::serverThreads, count -> count),
                row("RSS MiB", before, after, ResourceSnapshot::rssBytes, ResourceSnapshot::mebibytes),
                row("heap used MiB (after GC)", before, after, ResourceSnapshot::heapUsedBytes,
                        ResourceSnapshot::mebibytes));
        return new ResultTable(name, List.of("metric", "before", "after", "change"), rows);
    }

    /** A metric's row; a value that cannot be seen stays null, and so does its change. */
    private static List<Object> row(String metric, ResourceSnapshot before, ResourceSnapshot after,
                                    Function<ResourceSnapshot, Long> value, Function<Long, Object> format) {
        Long was = value.apply(before);
        Long is = value.apply(after);
        Long change = was == null || is == null ? null : is - was;
        return Arrays.asList(metric, was == null ? null : format.apply(was), is == null ? null : format.apply(is),
                change == null ? null : format.apply(change));
    }
}

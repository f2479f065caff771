package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Scenario idle: what N idle subscribers cost the server (threads, resident memory, heap), and whether one
 * event then reaches all of them and how fast.
 */
final class IdleScenario {
    private static final String EVENT_TYPE = "bench.idle";
    private static final String WARM_UP_EVENT_TYPE = "bench.idle.warm-up";
    private static final int WARM_UP_EVENTS = 500;
    private static final Duration OPEN_TIMEOUT_BASE = Duration.ofSeconds(30);
    private static final Duration OPEN_TIMEOUT_PER_SUBSCRIBER = Duration.ofMillis(10);
    private static final Duration FAN_OUT_TIMEOUT = Duration.ofSeconds(10);
    private static final double MIB = 1024.0 * 1024.0;

    private IdleScenario() {
    }

    static Scenario.Result run(Target target, int subscribers) {
        ResourceSnapshot before;
        ResourceSnapshot after;
        int received;
        SubscriberFleet fleet = SubscriberFleet.start(new SseEndpoint(target.baseUri(), EVENT_TYPE));
        long sentNanos;
        try (fleet; HttpPublisher publisher = new HttpPublisher(target.baseUri(), false)) {
            warmUp(publisher);
            // Taken with the fleet's thread already running, so that the difference is the subscribers.
            before = target.snapshot();
            fleet.open(subscribers, Deadline.in(OPEN_TIMEOUT_BASE.plus(
                    OPEN_TIMEOUT_PER_SUBSCRIBER.multipliedBy(subscribers)), subscribers + " subscribers to open"));
            after = target.snapshot();

            byte[] body = HttpPublisher.body(EVENT_TYPE, "fan-out");
            sentNanos = System.nanoTime();
            publisher.publish(body);
            Progress progress = new Progress("subscribers reached", subscribers);
            // Subscribers the event has not reached by the deadline are reported as lost.
            Deadline.in(FAN_OUT_TIMEOUT, "the event to reach every subscriber").await(
                    () -> fleet.received() == subscribers, () -> {
                        fleet.checkAlive();
                        progress.update(fleet.received());
                    });
            received = fleet.received();
        }
        long[] latencies = Arrays.stream(fleet.firstEventNanos()).map(nanos -> nanos - sentNanos).toArray();
        LatencyStats fanOut = LatencyStats.of(latencies);
        int duplicates = fleet.duplicates();

        List<String> failures = new ArrayList<>();
        if (received < subscribers || duplicates > 0) {
            failures.add("idle: the event reached " + received + " of " + subscribers + " subscribers, "
                    + duplicates + " duplicates");
        }
        return new Scenario.Result(List.of(resources(before, after), new ResultTable("idle-fan-out",
                List.of("subscribers", "received", "lost", "duplicated", "p50 ms", "max ms"),
                List.of(Arrays.asList(subscribers, received, subscribers - received, duplicates, fanOut.p50(),
                        fanOut.max())))), failures);
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

    private static ResultTable resources(ResourceSnapshot before, ResourceSnapshot after) {
        List<List<Object>> rows = List.of(
                row("live threads", before, after, ResourceSnapshot::threads, count -> count),
                row("eh- threads", before, after, ResourceSnapshot::serverThreads, count -> count),
                row("RSS MiB", before, after, ResourceSnapshot::rssBytes, IdleScenario::mebibytes),
                row("heap used MiB (after GC)", before, after, ResourceSnapshot::heapUsedBytes,
                        IdleScenario::mebibytes));
        return new ResultTable("idle-resources", List.of("metric", "before", "after", "change"), rows);
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

    private static BigDecimal mebibytes(long bytes) {
        return BigDecimal.valueOf(bytes / MIB).setScale(1, RoundingMode.HALF_UP);
    }
}

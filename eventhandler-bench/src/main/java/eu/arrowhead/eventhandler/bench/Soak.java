package eu.arrowhead.eventhandler.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Reliability mode soak: hours of ordinary use, for what only time shows (a leak of heap, threads or file
 * descriptors; a subscriber lost now and then). Four publishers publish at a steady rate to ten SSE
 * subscribers, which resume after their last id whenever a stream ends, as clients do. Every ten seconds
 * the server's heap after a full collection, RSS, threads and open file descriptors are recorded; at the
 * end each subscriber's deliveries are held against the acknowledged ids, and each resource's first, last
 * and highest value is reported beside the whole series.
 */
final class Soak {
    static final String EVENT_TYPE = "reliability.soak";
    private static final int PUBLISHERS = 4;
    private static final int SUBSCRIBERS = 10;
    private static final int DEFAULT_RATE = 200;
    private static final Duration SAMPLE_EVERY = Duration.ofSeconds(10);
    private static final Duration TICK = Duration.ofSeconds(1);
    private static final Duration OPEN_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration REOPEN_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(60);
    private static final String OUT_OF_MEMORY = "OutOfMemoryError";
    private static final List<String> COLUMNS = List.of("minutes", "events/s asked", "publishers", "subscribers",
            "acknowledged", "acknowledged events/s", "refused", "no answer", "server running at the end",
            "OutOfMemoryError");
    private static final List<String> SUBSCRIBER_COLUMNS = List.of("subscriber", "delivered", "lost",
            "duplicated", "out-of-order", "reconnections", "gap notices", "last problem");
    private static final List<String> SERIES_COLUMNS = List.of("seconds", "heap used MiB (after GC)", "RSS MiB",
            "threads", "open files", "acknowledged", "delivered (least)");
    private static final List<String> RESOURCE_COLUMNS = List.of("resource", "first", "last", "max");

    private Soak() {
    }

    /** One sample of the series. */
    private record Sample(long seconds, ResourceSnapshot server, Long openFiles, long acknowledged, long delivered) {

        List<Object> cells() {
            return Arrays.asList(seconds, ResourceSnapshot.mebibytes(server.heapUsedBytes()),
                    ResourceSnapshot.mebibytes(server.rssBytes()), server.threads(), openFiles, acknowledged,
                    delivered);
        }

        /** The sample as a progress line: each column's name and value. */
        String line() {
            List<Object> cells = cells();
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < cells.size(); i++) {
                line.append(i == 0 ? "" : ", ").append(SERIES_COLUMNS.get(i)).append(' ')
                        .append(ResultTable.text(cells.get(i)));
            }
            return line.toString();
        }
    }

    static Scenario.Result run(ReliabilityOptions options, Path serverLog) {
        int rate = options.rateOr(DEFAULT_RATE);
        Duration length = Duration.ofMinutes(options.minutes());
        List<String> failures = new ArrayList<>();
        List<Sample> samples = new ArrayList<>();
        List<ResumingSubscriber> subscribers = new ArrayList<>();
        try (TempDirectory directory = TempDirectory.create("eventhandler-reliability-soak-");
             ServerJvm server = ServerJvm.start(new ServerJvm.Spec(options.serverJar(), options.heapOr(null),
                     options.settings(StoreSettings.inMode("async", StoreSettings.h2(directory))), directory.path(),
                     serverLog))) {
            Reliability.say("soak", "server pid " + server.pid() + " at " + server.baseUri() + "; " + PUBLISHERS
                    + " publishers at " + rate + " events/s to " + SUBSCRIBERS + " subscribers for "
                    + length.toMinutes() + " min");
            SustainedPublish.Result published;
            try {
                SseEndpoint endpoint = new SseEndpoint(server.baseUri(), EVENT_TYPE);
                for (int i = 0; i < SUBSCRIBERS; i++) {
                    subscribers.add(ResumingSubscriber.open(endpoint, Deadline.in(OPEN_TIMEOUT, "a subscriber")));
                }
                SustainedPublish.Running running = SustainedPublish.start(server.baseUri(),
                        new SustainedPublish.Load(EVENT_TYPE, PUBLISHERS, 1, rate, true));
                long start = System.nanoTime();
                Deadline end = Deadline.in(length, "the soak");
                long nextSample = start;
                while (!end.passed()) {
                    if (System.nanoTime() - nextSample >= 0) {
                        nextSample += SAMPLE_EVERY.toNanos();
                        Sample sample = new Sample((System.nanoTime() - start) / 1_000_000_000L, server.snapshot(),
                                server.openFiles(), running.accepted(), leastDelivered(subscribers));
                        samples.add(sample);
                        Reliability.say("soak", sample.line());
                    }
                    subscribers.forEach(subscriber -> subscriber.keepOpen(Deadline.in(REOPEN_TIMEOUT, "a resume")));
                    Deadline.in(TICK, "the next tick").await(end::passed, () -> { }, Duration.ofMillis(50));
                }
                published = running.stop();
                Reliability.say("soak", "published; waiting for the subscribers to get all "
                        + published.accepted() + " acknowledged events");
                Deadline delivered = Deadline.in(DELIVERY_TIMEOUT, "the last deliveries");
                delivered.await(() -> leastDelivered(subscribers) >= published.accepted(),
                        () -> subscribers.forEach(subscriber -> subscriber.keepOpen(delivered)), TICK);
            } finally {
                subscribers.forEach(ResumingSubscriber::close);
            }
            boolean running = server.running();
            boolean outOfMemory = server.logContains(OUT_OF_MEMORY);
            List<List<Object>> subscriberRows = new ArrayList<>();
            for (int i = 0; i < subscribers.size(); i++) {
                ResumingSubscriber subscriber = subscribers.get(i);
                IdDelivery delivery = IdDelivery.of(published.ids(), subscriber.ids());
                subscriberRows.add(Arrays.asList(i + 1, delivery.delivered(), delivery.lost(), delivery.duplicated(),
                        delivery.outOfOrder(), subscriber.reconnections(), subscriber.gapNotices(),
                        subscriber.lastProblem() == null ? null : Reliability.shorten(subscriber.lastProblem())));
                if (!delivery.clean()) {
                    failures.add("subscriber " + (i + 1) + ": " + delivery.lost() + " lost, " + delivery.duplicated()
                            + " duplicated, " + delivery.outOfOrder() + " out of order");
                }
            }
            if (published.unanswered() > 0 || published.refused() > 0) {
                failures.add(published.refused() + " publishes refused (" + published.refusal() + "), "
                        + published.unanswered() + " not answered (" + published.noAnswer() + ")");
            }
            if (!running || outOfMemory) {
                failures.add("the server " + (running ? "ran out of heap" : "exited"));
            }
            List<Object> row = Arrays.asList(length.toMinutes(), rate, PUBLISHERS, SUBSCRIBERS, published.accepted(),
                    published.rate(), published.refused(), published.unanswered(), running ? "yes" : "no",
                    outOfMemory ? "yes" : "no");
            return new Scenario.Result(List.of(new ResultTable("soak", COLUMNS, List.of(row)),
                    new ResultTable("soak-subscribers", SUBSCRIBER_COLUMNS, subscriberRows),
                    new ResultTable("soak-resources", RESOURCE_COLUMNS, resources(samples)),
                    new ResultTable("soak-series", SERIES_COLUMNS, samples.stream().map(Sample::cells).toList())),
                    failures);
        }
    }

    private static long leastDelivered(List<ResumingSubscriber> subscribers) {
        return subscribers.stream().mapToLong(ResumingSubscriber::received).min().orElse(0);
    }

    /** Each resource's first, last and highest sample; a value that could not be read is left out. */
    private static List<List<Object>> resources(List<Sample> samples) {
        return List.of(
                resource("heap used MiB (after GC)", samples, sample -> sample.server().heapUsedBytes(), true),
                resource("RSS MiB", samples, sample -> sample.server().rssBytes(), true),
                resource("threads", samples, sample -> sample.server().threads(), false),
                resource("open files", samples, Sample::openFiles, false));
    }

    private static List<Object> resource(String name, List<Sample> samples, Function<Sample, Long> value,
                                         boolean bytes) {
        List<Long> values = samples.stream().map(value).filter(Objects::nonNull).toList();
        Function<Long, Object> format = bytes ? ResourceSnapshot::mebibytes : v -> v;
        return values.isEmpty() ? Arrays.asList(name, null, null, null) : Arrays.asList(name,
                format.apply(values.get(0)), format.apply(values.get(values.size() - 1)),
                format.apply(values.stream().mapToLong(Long::longValue).max().orElseThrow()));
    }
}

package eu.arrowhead.eventhandler.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store scenario's read-flood rows (issue 26): does reading the log hold up writing it? One server on the
 * packed defaults (async H2) with a log of {@value #LOG_EVENTS} events; scenario A's latency loop and the
 * sustained rate of 8 publishers are measured once with nothing else running and once while {@value #RESUMERS}
 * subscribers resume from id 0 over and over, each reading page after page through the whole log as fast as it
 * can. The writer's rate under reads should stay within 20% of its rate without.
 */
final class ReadFloodRows {
    static final int LOG_EVENTS = 1_000_000;
    static final int RESUMERS = 8;
    private static final String LOGGED_TYPE = "bench.logged";
    private static final int SEED_BATCH = 1_000;
    private static final int PUBLISHERS = 8;
    static final List<String> COLUMNS = List.of("configuration", "log events", "resumes from 0", "events",
            "lost", "p50 ms", "p99 ms", "max ms", "sustained publish/s (" + PUBLISHERS + " publishers)", "refused",
            "resume pages read", "events replayed", "rate against quiet");

    private ReadFloodRows() {
    }

    /** Both rows, on a server with {@code config}; failures of delivery or of the log go to {@code failures}. */
    static List<List<Object>> run(Map<String, String> config, int events, Duration sustain, List<String> failures) {
        String label = "store read flood";
        List<List<Object>> rows = new ArrayList<>();
        try (Target target = InProcessTarget.start(config)) {
            URI base = target.baseUri();
            progress(label, "logging " + LOG_EVENTS + " events in batches of " + SEED_BATCH);
            long lastSeeded = seed(base);
            try (StoreProbe probe = new StoreProbe(base)) {
                probe.awaitWritten(lastSeeded, Deadline.in(Duration.ofMinutes(10), label + " seeding"), label);
            }
            PublishLoop loop = new PublishLoop(PublishLoop.Shape.of(label, 1, 1, events), base, new RawHttpEnds(false),
                    target::snapshot);
            loop.run();
            BigDecimal quietRate = measure(label + " quiet", loop, base, sustain, 0, null, rows, failures);
            try (Resumers resumers = Resumers.start(base, RESUMERS, lastSeeded)) {
                measure(label + " under reads", loop, base, sustain, RESUMERS, resumers, rows, failures);
                BigDecimal rate = (BigDecimal) rows.get(1).get(8);
                rows.get(1).set(12, quietRate.signum() == 0 ? null : rate.divide(quietRate, 2, RoundingMode.HALF_UP));
            }
        }
        return rows;
    }

    private static BigDecimal measure(String label, PublishLoop loop, URI base, Duration sustain, int resuming,
                                      Resumers resumers, List<List<Object>> rows, List<String> failures) {
        progress(label, "latency: scenario A's loop");
        long pagesBefore = resumers == null ? 0 : resumers.pages.get();
        long replayedBefore = resumers == null ? 0 : resumers.events.get();
        PublishLoop.Result measured = loop.run();
        progress(label, PUBLISHERS + " publishers for " + sustain.toSeconds() + " s");
        SustainedPublish.Result sustained = SustainedPublish.run(base, PUBLISHERS, sustain);
        DeliveryLog.Outcome outcome = measured.outcome();
        if (!outcome.clean()) {
            failures.add(label + ": " + outcome.problems());
        }
        LatencyStats latency = LatencyStats.of(outcome.latencyNanos());
        BigDecimal rate = sustained.rate();
        rows.add(new ArrayList<>(Arrays.asList(resuming == 0 ? "async H2, quiet" : "async H2, " + resuming
                        + " resuming from 0", LOG_EVENTS, resuming, outcome.events(), outcome.lost(), latency.p50(),
                latency.p99(), latency.max(), rate, sustained.refused(),
                resumers == null ? null : resumers.pages.get() - pagesBefore,
                resumers == null ? null : resumers.events.get() - replayedBefore, resuming == 0 ? BigDecimal.ONE : null)));
        progress(label, rate + " publishes/s, " + sustained.refused() + " refused");
        return rate;
    }

    /** Fills the log with small events of their own type, two connections at once; returns the last id. */
    private static long seed(URI base) {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < SEED_BATCH; i++) {
            body.append(i == 0 ? "" : ",").append("{\"eventType\":\"").append(LOGGED_TYPE)
                    .append("\",\"payload\":\"21.5\",\"metaData\":{\"unit\":\"celsius\"}}");
        }
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/eventhandler/publish/batch"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.append(']').toString())).build();
        AtomicLong logged = new AtomicLong();
        AtomicLong lastId = new AtomicLong();
        Runnable publisher = () -> {
            Deadline deadline = Deadline.in(Duration.ofMinutes(10), "seeding the log");
            while (logged.get() < LOG_EVENTS && !deadline.passed()) {
                try {
                    HttpResponse<String> answer = client.send(request, HttpResponse.BodyHandlers.ofString());
                    if (answer.statusCode() == 200) {
                        logged.addAndGet(SEED_BATCH);
                        String ids = answer.body();
                        lastId.accumulateAndGet(Long.parseLong(ids.substring(ids.lastIndexOf(',') + 1,
                                ids.indexOf(']')).strip()), Math::max);
                    }
                } catch (IOException e) {
                    throw new BenchException("seeding the log failed: " + e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        };
        Thread second = new Thread(publisher, "bench-seed");
        second.start();
        publisher.run();
        try {
            second.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return lastId.get();
    }

    private static void progress(String label, String phase) {
        System.err.println("bench: " + label + ": " + phase);
    }

    /**
     * Subscribers that resume from id 0, read every page through the whole log as fast as they can, and start
     * again: the heaviest reads a client can ask for.
     */
    private static final class Resumers implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong pages = new AtomicLong();
        private final AtomicLong events = new AtomicLong();
        private final List<Thread> threads = new ArrayList<>();
        private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

        private final long lastLogged;

        private Resumers(long lastLogged) {
            this.lastLogged = lastLogged;
        }

        /** {@code count} subscribers reading the log up to {@code lastLogged}, from 0 each time. */
        static Resumers start(URI base, int count, long lastLogged) {
            Resumers resumers = new Resumers(lastLogged);
            for (int i = 0; i < count; i++) {
                Thread thread = new Thread(() -> resumers.readAgainAndAgain(base), "bench-resumer-" + i);
                thread.setDaemon(true);
                thread.start();
                resumers.threads.add(thread);
            }
            return resumers;
        }

        private void readAgainAndAgain(URI base) {
            long afterId = 0;
            while (running.get()) {
                HttpRequest request = HttpRequest.newBuilder(base.resolve("/eventhandler/events?eventType="
                        + LOGGED_TYPE + "&lastEventId=" + afterId)).header("Accept", "text/event-stream").build();
                try {
                    HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
                    try (InputStream body = response.body(); BufferedReader lines = new BufferedReader(
                            new InputStreamReader(body, StandardCharsets.UTF_8))) {
                        afterId = readPage(lines, afterId);
                    }
                } catch (IOException e) {
                    // the stream was cut: resume where it got to
                } catch (InterruptedException e) {
                    return;
                }
                pages.incrementAndGet();
                if (afterId >= lastLogged) {
                    afterId = 0;
                }
            }
        }

        /**
         * Reads one stream until the server ends it (a page, or a refusal when the readers are busy) or it reaches
         * the last logged event; the id of the last event it gave.
         */
        private long readPage(BufferedReader lines, long afterId) throws IOException {
            long last = afterId;
            String id = null;
            String type = null;
            for (String line; running.get() && (line = lines.readLine()) != null; ) {
                if (line.startsWith("id: ")) {
                    id = line.substring(4);
                } else if (line.startsWith("event: ")) {
                    type = line.substring(7);
                } else if (line.isEmpty()) {
                    if (LOGGED_TYPE.equals(type) && id != null) {
                        last = Long.parseLong(id);
                        events.incrementAndGet();
                        if (last >= lastLogged) {
                            return last;
                        }
                    }
                    id = null;
                    type = null;
                }
            }
            return last;
        }

        @Override
        public void close() {
            running.set(false);
            for (Thread thread : threads) {
                thread.interrupt();
            }
        }
    }
}

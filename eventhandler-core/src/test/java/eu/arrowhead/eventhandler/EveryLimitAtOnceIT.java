package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29, item 3: every part of the heap a client can make grow, at its limit at the same time, on a
 * {@code -Xmx64m} server with the serial collector (as the Raspberry Pi unit runs it) and the default event store.
 * Before, topics had no share and the shares together were the whole heap: the live set reached 62 of 64 MiB and
 * the server spent 85% of its time collecting; later, with shares of the heap that left more than the old
 * generation live, 65%. Now, with {@code topic.max-count} topics, {@code subscriber.max-count} streams, as many
 * connections as held that send nothing or half a head, slow readers holding the subscriber queues and the replay
 * windows full while 60 KB events are published, and a client keeping the store's buffer full, the collector
 * takes under a tenth of the time by the JVM's own counters, and a bystander's publishes are answered within 50 ms
 * (p99), or within two of the machine's full collections where one takes longer than 25 ms. None of them is refused:
 * the store's buffer keeps its last eighth for small publishes (before, the backlog's large events took all of it,
 * and a slow machine refused up to 35 of the bystander's 600).
 */
class EveryLimitAtOnceIT {
    private static final int TYPE_LENGTH = 200;
    private static final String LARGE_PAYLOAD = "x".repeat(60_000);
    private static final int SLOW_READERS = 6;
    /** Long enough for some 20 full collections, so that the p99 of 600 publishes is not one pause more or less. */
    private static final long LOAD_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long FIREHOSE_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long BYSTANDER_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final byte[] MOST_OF_A_HEAD = ("GET /eventhandler/mgmt/health HTTP/1.1\r\nHost: x\r\nX-Padding: "
            + "p".repeat(7_500)).getBytes(StandardCharsets.US_ASCII);
    /** The firehose's, the bystander's and the backlog's. */
    private static final int LOAD_CONNECTIONS = 3;
    private static final AtomicInteger REFUSED_BYSTANDER = new AtomicInteger();
    /** The bystander's refusals by their message, digits left out. */
    private static final Map<String, Integer> REFUSAL_REASONS = new ConcurrentHashMap<>();
    private static final AtomicInteger BACKLOG_ACCEPTED = new AtomicInteger();
    private static final AtomicInteger BACKLOG_FOUND_FULL = new AtomicInteger();

    @Test
    void allSharesFullAtOnceLeaveTheCollectorUnderATenthOfTheTime(@TempDir Path workingDirectory) throws Exception {
        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory,
                "--server.port=0", "--server.host=127.0.0.1"));
             TestClient client = new TestClient(server.awaitListening(), null)) {
            URI base = client.uri("/");
            int maxTopics = (int) client.metric("eventhandler_topics_max");
            int maxStreams = (int) client.metric("eventhandler_subscribers_max");
            long phase = System.nanoTime();
            fillTopics(client, maxTopics);
            System.out.printf("topics %d in %.1f s%n", maxTopics, (System.nanoTime() - phase) / 1e9);
            phase = System.nanoTime();
            // The slow readers first: the idle streams then take whatever the streams' share has left.
            List<RawSubscriber> streams = new ArrayList<>();
            for (int i = 0; i < SLOW_READERS; i++) {
                RawSubscriber slow = RawSubscriber.open(base.getPort(), "?eventType=firehose", 4096);
                slow.awaitText(":ok", 30_000);
                streams.add(slow);
            }
            streams.addAll(openStreams(base.getPort(), maxStreams - SLOW_READERS, maxTopics));
            System.out.printf("streams %d in %.1f s%n", streams.size(), (System.nanoTime() - phase) / 1e9);
            List<Socket> waiting = new ArrayList<>();
            try {
                // Connections waited on for a head, silent ones and ones with most of a head sent, up to their bounds
                // but for the set-up's connection and the load's three: past a bound a new connection is closed while
                // all the others have waited under a second, so the load's own would be.
                waiting.addAll(connect(base.getPort(),
                        (int) client.metric("eventhandler_connections_silent_max") - LOAD_CONNECTIONS - 1, new byte[0]));
                waiting.addAll(connect(base.getPort(),
                        (int) client.metric("eventhandler_connections_incomplete_heads_max") - LOAD_CONNECTIONS,
                        MOST_OF_A_HEAD));
                long pid = server.process().pid();
                Collections gcBefore = collections(pid);
                long start = System.nanoTime();
                long[] latencies;
                // Each load on a connection of its own.
                try (TestClient firehose = new TestClient(base, null);
                     TestClient bystander = new TestClient(base, null);
                     TestClient backlog = new TestClient(base, null)) {
                    latencies = load(firehose, bystander, backlog, start);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                Collections gcAfter = collections(pid);
                double gcShare = (gcAfter.seconds() - gcBefore.seconds()) / seconds;
                long fullPause = gcAfter.meanFullPauseNanos(gcBefore);

                Arrays.sort(latencies);
                long p99 = latencies[latencies.length * 99 / 100];
                String report;
                try (TestClient after = new TestClient(base, null)) {
                    report = String.format("GC %.1f%% of %.1f s, %.0f full collections of %.1f ms on average;"
                                + " bystander p99 %.1f ms, max %.1f ms, %d of %d refused; backlog %d accepted, found the store's buffer full %d times; topics %s,"
                                + " streams %s, queued peak %s, windows %s",
                        gcShare * 100, seconds, gcAfter.fullCount() - gcBefore.fullCount(), fullPause / 1e6,
                        p99 / 1e6, latencies[latencies.length - 1] / 1e6, REFUSED_BYSTANDER.get(),
                        latencies.length, BACKLOG_ACCEPTED.get(), BACKLOG_FOUND_FULL.get(),
                        after.metric("eventhandler_topics"), after.metric("eventhandler_subscribers"),
                        after.metric("eventhandler_subscriber_queued_bytes_peak"),
                        after.metric("eventhandler_replay_windows_bytes"));
                }
                System.out.println(report);
                assertTrue(BACKLOG_FOUND_FULL.get() > 0, "the store's buffer was never full: " + report);
                assertTrue(gcShare < 0.10, report);
                // 50 ms on a machine the server has to itself; a machine loaded past its cores (other builds) delays
                // every thread by its run queue, whatever the heap does, so the bound grows with the load then.
                // The p99 is set by how often a publish meets a full collection, and how long one stops the server
                // is the machine's (50-65 ms here, longer on a Pi; CI once saw a p99 of 93 ms at a load of 2.7):
                // a bystander that waits no longer than two of them waited for the collector, not behind the load.
                OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
                double overload = Math.max(1, os.getSystemLoadAverage() / os.getAvailableProcessors());
                long bound = Math.max((long) (TimeUnit.MILLISECONDS.toNanos(50) * overload), 2 * fullPause);
                assertTrue(p99 < bound, report + "; load " + os.getSystemLoadAverage() + " on "
                        + os.getAvailableProcessors() + " cores");
                // Hundreds of small publishes fit in the kept eighth: only a writer stalled for many seconds refuses one.
                assertEquals(0, REFUSED_BYSTANDER.get(), report + "; refused: " + REFUSAL_REASONS);
                assertFalse(server.output().contains("OutOfMemoryError"), server.output());
            } finally {
                for (RawSubscriber stream : streams) {
                    stream.close();
                }
                for (Socket socket : waiting) {
                    socket.close();
                }
            }
        }
    }

    private static List<Socket> connect(int port, int count, byte[] bytes) throws IOException {
        List<Socket> sockets = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            socket.getOutputStream().write(bytes);
            sockets.add(socket);
        }
        return sockets;
    }

    /** Makes {@code topic.max-count} topics with long names, a thousand to a batch. */
    private static void fillTopics(TestClient client, int maxTopics) throws InterruptedException {
        String prefix = "t".repeat(TYPE_LENGTH - 6);
        for (int first = 0; first < maxTopics; first += 1000) {
            StringBuilder batch = new StringBuilder("[");
            for (int i = first; i < Math.min(maxTopics, first + 1000); i++) {
                batch.append(i == first ? "" : ",").append("{\"eventType\":\"").append(prefix)
                        .append(String.format("%06d", i)).append("\",\"payload\":\"j\"}");
            }
            String body = batch.append(']').toString();
            Await.until("the store's writer takes the batch", Duration.ofSeconds(30),
                    () -> client.post("/eventhandler/publish/batch", body).statusCode() == 200);
        }
        assertEquals(maxTopics, client.metric("eventhandler_topics"));
    }

    /**
     * Idle streams up to the limit, each on one of the topics (so none gives way to the firehose): until one is
     * refused, since each is charged for its long request line, or {@code count} are open.
     */
    private static List<RawSubscriber> openStreams(int port, int count, int maxTopics) throws IOException {
        String prefix = "t".repeat(TYPE_LENGTH - 6);
        List<RawSubscriber> streams = new ArrayList<>(count + SLOW_READERS);
        for (int i = 0; i < count; i++) {
            RawSubscriber stream = RawSubscriber.open(port, "?eventType=" + prefix + String.format("%06d",
                    i % (maxTopics - 1)), 0);
            stream.awaitText("\r\n\r\n", 30_000);
            stream.awaitText("\n\n", 30_000);
            if (!stream.received().contains(":ok")) {
                stream.close();
                break;
            }
            streams.add(stream);
        }
        assertTrue(streams.size() >= count * 8 / 10, streams.size() + " of " + count + " streams served");
        return streams;
    }

    /**
     * Publishes 60 KB events to the firehose (its slow readers' queues and the replay windows fill, and the store
     * writes them) at a fixed pace, 60 KB events of another type as fast as the store's buffer takes them (a 503
     * when it is full, waited out for 20 ms), and a bystander's small events on a third connection; returns the
     * bystander's latencies.
     */
    private static long[] load(TestClient client, TestClient bystander, TestClient backlog, long start)
            throws Exception {
        Thread firehose = new Thread(() -> {
            long next = start;
            while (System.nanoTime() - start < LOAD_NANOS) {
                client.post("/eventhandler/publish", "{\"eventType\":\"firehose\",\"payload\":\"" + LARGE_PAYLOAD
                        + "\"}");
                next += FIREHOSE_PERIOD_NANOS;
                sleepUntil(next);
            }
        }, "firehose");
        firehose.start();
        AtomicReference<String> backlogWrong = new AtomicReference<>();
        Thread backlogLoad = new Thread(() -> keepTheStoreBufferFull(backlog, start, backlogWrong), "backlog");
        backlogLoad.start();
        List<Long> latencies = new ArrayList<>();
        long next = start;
        while (System.nanoTime() - start < LOAD_NANOS) {
            long sent = System.nanoTime();
            Reply reply = bystander.post("/eventhandler/publish", "{\"eventType\":\"bystander\",\"payload\":\"b\"}");
            latencies.add(System.nanoTime() - sent);
            if (reply.statusCode() != 200) {
                assertEquals(503, reply.statusCode(), reply.body());
                REFUSED_BYSTANDER.incrementAndGet();
                REFUSAL_REASONS.merge(reply.body().replaceAll("[0-9]+", "N"), 1, Integer::sum);
            }
            next += BYSTANDER_PERIOD_NANOS;
            sleepUntil(next);
        }
        firehose.join();
        backlogLoad.join();
        assertEquals(null, backlogWrong.get(), "the backlog's publishes are answered 200, or 503 when the buffer is full");
        return latencies.stream().mapToLong(Long::longValue).toArray();
    }

    private static void keepTheStoreBufferFull(TestClient backlog, long start, AtomicReference<String> wrong) {
        String event = "{\"eventType\":\"backlog\",\"payload\":\"" + LARGE_PAYLOAD + "\"}";
        while (System.nanoTime() - start < LOAD_NANOS) {
            Reply reply = backlog.post("/eventhandler/publish", event);
            if (reply.statusCode() == 200) {
                BACKLOG_ACCEPTED.incrementAndGet();
            } else if (reply.statusCode() == 503) {
                BACKLOG_FOUND_FULL.incrementAndGet();
                sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20));
            } else {
                wrong.set(reply.statusCode() + " " + reply.body());
                return;
            }
        }
    }

    /** Paces the load (not a synchronisation: the measurement is over whatever time it took). */
    private static void sleepUntil(long nanoTime) {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Seconds the server's collectors have taken so far, from its own counters ({@code jcmd PerfCounter.print}). */
    /** The server's collector counters, from the JVM's own performance counters. */
    private record Collections(double seconds, double fullSeconds, double fullCount) {
        /** The mean pause of the full collections since {@code before}, in nanos; 0 without one. */
        long meanFullPauseNanos(Collections before) {
            double count = fullCount - before.fullCount;
            return count == 0 ? 0 : (long) ((fullSeconds - before.fullSeconds) / count * 1e9);
        }
    }

    private static Collections collections(long pid) throws Exception {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid), "PerfCounter.print").redirectErrorStream(true).start();
        String counters = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(jcmd.waitFor(30, TimeUnit.SECONDS));
        double frequency = counter(counters, "sun.os.hrt.frequency");
        double ticks = 0;
        Matcher collector = Pattern.compile("sun\\.gc\\.collector\\.\\d+\\.time=(\\d+)").matcher(counters);
        while (collector.find()) {
            ticks += Double.parseDouble(collector.group(1));
        }
        if (ticks == 0 && !counters.contains("sun.gc.collector.0.time")) {
            throw new UncheckedIOException(new IOException("no collector counters in:\n" + counters));
        }
        // The serial collector's second counter is its full collections' ("Serial full collection pauses").
        return new Collections(ticks / frequency, counter(counters, "sun.gc.collector.1.time") / frequency,
                counter(counters, "sun.gc.collector.1.invocations"));
    }

    private static double counter(String counters, String name) {
        Matcher matcher = Pattern.compile(Pattern.quote(name) + "=(\\d+)").matcher(counters);
        assertTrue(matcher.find(), "no " + name + " in:\n" + counters);
        return Double.parseDouble(matcher.group(1));
    }
}

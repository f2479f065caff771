package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A subscriber that never reads must cost the others nothing, and must not cost memory without bound; one
 * that stops reading only for a while must not be cut off for it.
 */
class SlowSubscriberTest {
    private static final String KILOBYTE = "x".repeat(1024);
    private static final long MIB = 1 << 20;

    @Test
    void aStalledSubscriberIsCutOffWithinItsQueueBytesWhileAHealthyOneKeepsLowLatency() throws Exception {
        int events = 20_000;
        long queueBytes = MIB;
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        long heapBefore = memory.getHeapMemoryUsage().getUsed();
        try (TestServer server = TestServer.start("subscriber.queue-max-bytes", Long.toString(queueBytes));
             RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=firehose", 4096);
             SseStream healthy = server.subscribe("?eventType=firehose")) {
            stalled.awaitText(":ok", 5_000);

            long[] sent = new long[events];
            for (int i = 0; i < events; i++) {
                sent[i] = System.nanoTime();
                server.publish("firehose", KILOBYTE);
            }
            List<Frame> received = healthy.events(events, Duration.ofSeconds(60));
            long[] latencies = new long[events];
            for (int i = 0; i < events; i++) {
                latencies[i] = received.get(i).receivedNanos() - sent[i];
            }
            Arrays.sort(latencies);
            double p99Millis = latencies[(int) (events * 0.99)] / 1e6;
            // Held back by the stalled one, the healthy subscriber would wait for the write timeout (seconds) per
            // event; its latency on a quiet machine is about a millisecond, and a loaded CI machine has shown
            // 60-160 ms: the bound is between the two, far from both.
            assertTrue(p99Millis < 1000, "healthy subscriber's p99 latency was " + p99Millis + " ms");

            assertTrue(stalled.drainUntilClosed(30_000), "the stalled subscriber was never disconnected");
            Await.until("the stalled subscriber is gone", Duration.ofSeconds(10),
                    () -> server.topic("firehose").orElseThrow().subscribers() == 1);
            long dropped = server.topic("firehose").orElseThrow().dropped();
            // Each event's frame is its 1 KiB payload and more: the queue held fewer than 1 024 of them.
            assertTrue(dropped >= 1 && dropped <= queueBytes / KILOBYTE.length() + 1,
                    "the stalled subscriber held at most its queue's bytes: dropped " + dropped);
            assertTrue(server.metric("eventhandler_subscriber_queue_bytes_peak") <= queueBytes);
            assertEquals(1.0, server.metric("eventhandler_subscriber_disconnects_total{reason=\"slow\"}"));
            assertEquals(0.0, server.metric("eventhandler_subscriber_queued_bytes"), "the cut queue gave its bytes back");
        }
        System.gc();
        long heapGrowth = memory.getHeapMemoryUsage().getUsed() - heapBefore;
        assertTrue(heapGrowth < 64L << 20, "heap grew by " + (heapGrowth >> 20) + " MiB");
    }

    /**
     * Finding 13 of issue 12: a queue of 1 024 events cut off a subscriber that was descheduled for a
     * fraction of a second under load. With the default bounds (a share of the heap) a subscriber that
     * reads nothing for 2 s while megabytes of events are published catches up and loses nothing.
     */
    @Test
    void aSubscriberThatStopsReadingForTwoSecondsIsNotCutAndReceivesEverything() throws Exception {
        int atLeast = 6_000;
        int atMost = 10_000;
        try (TestServer server = TestServer.start();
             PausedReader paused = PausedReader.open(server.port(), "?eventType=burst")) {
            List<Long> published = new ArrayList<>(atMost);
            long pauseEnds = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            // Not reading meanwhile; its 4 KiB receive buffer is full after four events.
            while (published.size() < atLeast || System.nanoTime() < pauseEnds) {
                if (published.size() < atMost) {
                    published.add(server.publish("burst", KILOBYTE));
                } else {
                    LockSupport.parkNanos(10_000_000);
                }
            }
            double behind = server.metric("eventhandler_subscriber_queue_bytes_peak");
            assertTrue(behind > MIB, "the paused subscriber fell more than 1 024 events behind: " + behind + " bytes");

            // The opening frame carries the id before the first event, as a resume point.
            List<Long> received = paused.readIds(published.get(published.size() - 1), Duration.ofSeconds(60))
                    .stream().filter(id -> id >= published.get(0)).toList();
            assertEquals(published.size(), received.size(), "every event arrived once");
            assertTrue(published.equals(received), "in order");
            assertEquals(0.0, server.metric("eventhandler_subscriber_disconnects_total{reason=\"slow\"}"));
            assertEquals(0.0, server.metric("eventhandler_subscriber_disconnects_total{reason=\"write_timeout\"}"));
        }
    }

    /**
     * Many stalled subscribers together stay within {@code subscriber.total-queue-max-bytes}: without that
     * bound each would hold its own 4 MiB, 24 MiB for six; with it they are cut once they hold half of
     * the 16 MiB, while the subscriber that keeps up is not touched.
     */
    @Test
    void stalledSubscribersTogetherStayWithinTheTotalWhileAHealthyOneIsNotTouched() throws Exception {
        int events = 12_000;
        int stalledCount = 6;
        long total = 16 * MIB;
        List<RawSubscriber> stalled = new ArrayList<>();
        try (TestServer server = TestServer.start("subscriber.queue-max-bytes", Long.toString(4 * MIB),
                "subscriber.total-queue-max-bytes", Long.toString(total), "subscriber.max-count", "8",
                "subscriber.send-buffer-bytes", "1024");
             SseStream healthy = server.subscribe("?eventType=crowded")) {
            for (int i = 0; i < stalledCount; i++) {
                RawSubscriber subscriber = RawSubscriber.open(server.port(), "?eventType=crowded", 4096);
                stalled.add(subscriber);
                subscriber.awaitText(":ok", 5_000);
            }
            for (int i = 0; i < events; i++) {
                server.publish("crowded", KILOBYTE);
            }
            assertEquals(events, healthy.events(events, Duration.ofSeconds(60)).size());
            for (RawSubscriber subscriber : stalled) {
                assertTrue(subscriber.drainUntilClosed(30_000), "a stalled subscriber was never disconnected");
            }
            assertEquals((double) stalledCount,
                    server.metric("eventhandler_subscriber_disconnects_total{reason=\"slow\"}"));
            double peak = server.metric("eventhandler_subscriber_queued_bytes_peak");
            assertTrue(peak > 4 * MIB, "several stalled subscribers' queues were full at once: " + peak);
            assertTrue(peak <= total, "the queues held at most " + total + " together: " + peak);
            Await.until("every queue gave its bytes back", Duration.ofSeconds(10),
                    () -> server.metric("eventhandler_subscriber_queued_bytes") == 0);
        } finally {
            stalled.forEach(RawSubscriber::close);
        }
    }

    /** An SSE subscriber on a socket with a small receive buffer that reads nothing until told to. */
    private static final class PausedReader implements AutoCloseable {
        private static final Pattern ID = Pattern.compile("^id: (\\d+)$", Pattern.MULTILINE);
        private final Socket socket;
        private final InputStream in;

        private PausedReader(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
        }

        static PausedReader open(int port, String query) throws IOException {
            Socket socket = new Socket();
            socket.setReceiveBufferSize(4096);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /eventhandler/events" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            PausedReader reader = new PausedReader(socket);
            String head = reader.line() + reader.untilBlankLine();
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
            return reader;
        }

        /** Reads the chunked stream until the event with id {@code lastId}; returns every event id. */
        List<Long> readIds(long lastId, Duration timeout) throws IOException {
            long deadline = System.nanoTime() + timeout.toNanos();
            List<Long> ids = new ArrayList<>();
            StringBuilder pending = new StringBuilder();
            while (ids.isEmpty() || ids.get(ids.size() - 1) != lastId) {
                assertTrue(System.nanoTime() < deadline, "events up to " + lastId + " did not arrive");
                int size = Integer.parseInt(line().trim(), 16);
                assertTrue(size > 0, "the stream ended after " + ids.size() + " events");
                pending.append(new String(in.readNBytes(size), StandardCharsets.UTF_8));
                line();
                int frameEnd = pending.lastIndexOf("\n\n");
                if (frameEnd >= 0) {
                    Matcher id = ID.matcher(pending.substring(0, frameEnd + 2));
                    while (id.find()) {
                        ids.add(Long.parseLong(id.group(1)));
                    }
                    pending.delete(0, frameEnd + 2);
                }
            }
            return ids;
        }

        private String line() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (int b; (b = in.read()) != '\n'; ) {
                if (b < 0) {
                    throw new AssertionError("the connection closed");
                }
                bytes.write(b);
            }
            return bytes.toString(StandardCharsets.US_ASCII) + "\n";
        }

        private String untilBlankLine() throws IOException {
            StringBuilder lines = new StringBuilder();
            for (String line; !(line = line()).equals("\r\n"); ) {
                lines.append(line);
            }
            return lines.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.BusyWorker;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.RefusedStream;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ShutdownAndOverloadTest {

    @Test
    void shutdownDeliversWhatIsQueuedThenEndsStreamsCleanly() throws Exception {
        TestServer server = TestServer.start("server.shutdown-grace-seconds", "10");
        try (SseStream stream = server.subscribe("?eventType=closing")) {
            long last = 0;
            for (int i = 0; i < 2_000; i++) {
                last = server.publish("closing", Integer.toString(i));
            }
            assertTrue(server.server().shutdown(), "clean shutdown");
            assertEquals(2_000, stream.events(2_000, Duration.ofSeconds(10)).size());
            stream.awaitEnd(Duration.ofSeconds(10));
            assertTrue(stream.endedCleanly(), "the stream ended with the chunked terminator, not a reset");
            assertTrue(last > 0);
        } finally {
            server.close();
        }
    }

    @Test
    void shutdownStopsAcceptingAtOnceWhileStreamsStillDrain() throws Exception {
        TestServer server = TestServer.start("server.shutdown-grace-seconds", "5", "subscriber.send-buffer-bytes", "1024");
        try (RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=held", 4096)) {
            stalled.awaitText(":ok", 5_000);
            for (int i = 0; i < 3_000; i++) {
                server.publish("held", "z".repeat(1024));
            }
            int port = server.port();
            CompletableFuture<Boolean> stopping = CompletableFuture.supplyAsync(() -> server.server().shutdown());
            Await.until("new connections are refused", Duration.ofSeconds(4), () -> refused(port));
            assertFalse(stopping.isDone(), "refused while the stalled stream was still being drained");
            assertFalse(stopping.get(), "the stalled stream could not be drained: not a clean stop");
        } finally {
            server.close();
        }
    }

    private static boolean refused(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            return false;
        } catch (java.net.SocketException e) {
            // Refused, or reset: a connection the kernel had queued as the listener closed is reset, not refused.
            return true;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aFullWorkerQueueAnswers503WithRetryAfter() throws Exception {
        // The worker held by the stalled subscriber is handed back when its write fails once the subscriber is
        // gone, or at the latest when the write times out: 15 s, well inside the wait below, so that a loaded
        // machine that is slow to see the close cannot fail the test (with 60 s it did, once in CI).
        try (TestServer server = TestServer.start("server.worker-threads", "1", "server.worker-queue", "0",
                "subscriber.write-mode", "publisher-thread", "subscriber.write-timeout-seconds", "15")) {
            try (RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=held", 4096)) {
                stalled.awaitText(":ok", 5_000);
                try (BusyWorker busy = BusyWorker.occupy(server, "held")) {
                    Reply refused = busy.refusal();
                    assertEquals("1", refused.header("Retry-After"));
                    assertTrue(refused.body().contains("\"errorCode\":503"), refused.body());
                    assertTrue(refused.body().contains("server.worker-queue"), refused.body());
                }
            }
            Await.until("served again once the worker is free", Duration.ofSeconds(30),
                    () -> server.get("/eventhandler/echo").statusCode() == 200);
        }
    }

    /**
     * A publishing thread that waits for a stalled subscriber's socket holds that subscriber's stream; when the
     * client then goes away, the selector thread that sees it must not wait for the stream with it: every
     * connection of that selector would wait for the write timeout (60 s here), this test's requests among them.
     */
    @Test
    void aStalledSubscriberThatLeavesFreesTheWorkerAndTheSelectorAtOnce() throws Exception {
        try (TestServer server = TestServer.start("server.worker-threads", "1", "server.worker-queue", "0",
                "server.selector-threads", "1", "subscriber.write-mode", "publisher-thread",
                "subscriber.write-timeout-seconds", "60")) {
            try (RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=held", 4096)) {
                stalled.awaitText(":ok", 5_000);
                BusyWorker.occupy(server, "held").close();
            }
            long leftAt = System.nanoTime();
            // A request the stuck selector took would be answered only after the write timeout: timed as a whole.
            Await.until("served again", Duration.ofSeconds(90),
                    () -> server.get("/eventhandler/echo").statusCode() == 200);
            long tookMillis = (System.nanoTime() - leftAt) / 1_000_000;
            assertTrue(tookMillis < 10_000, "served again only " + tookMillis + " ms after the subscriber left");
        }
    }

    @Test
    void atTheSubscriberLimitAStreamIsRefusedForNowAndServedOnceAPlaceIsFree() throws Exception {
        try (TestServer server = TestServer.start("subscriber.max-count", "1")) {
            try (RawSubscriber first = RawSubscriber.open(server.port(), "?eventType=a", 0)) {
                first.awaitText(":ok", 5_000);
                ErrorMessage refused = RefusedStream.request(server.port(), "?eventType=a", 1000);
                assertTrue(refused.errorMessage().contains("subscriber.max-count"), refused.errorMessage());
            }
            // The place comes back once the server has seen the first client go.
            Await.until("a stream opens again", Duration.ofSeconds(10), () -> opens(server, "?eventType=a"));
        }
    }

    @Test
    void aRefusalCarriesTheConfiguredRetry() throws Exception {
        try (TestServer server = TestServer.start("subscriber.max-count", "1", "sse.retry-millis", "2500");
             RawSubscriber first = RawSubscriber.open(server.port(), "?eventType=a", 0)) {
            first.awaitText(":ok\nretry: 2500\n", 5_000);
            RefusedStream.request(server.port(), "?eventType=a", 2500);
        }
    }

    @Test
    void aSubscriptionThatWouldCreateATopicPastTheLimitIsRefusedForNow() throws Exception {
        try (TestServer server = TestServer.start("topic.max-count", "1");
             SseStream stream = server.subscribe("?eventType=ONE")) {
            // The only topic has a subscriber: it does not give way (an idle one would, see TopicEvictionTest).
            ErrorMessage refused = RefusedStream.request(server.port(), "?eventType=two", 1000);
            assertTrue(refused.errorMessage().contains("topic.max-count"), refused.errorMessage());
            long id = server.publish("one", "y");
            assertEquals(Long.toString(id), stream.nextEvent(Duration.ofSeconds(10)).id());
        }
    }

    @Test
    void aStreamAskedForDuringShutdownIsRefusedForNow() throws Exception {
        TestServer server = TestServer.start("server.shutdown-grace-seconds", "10", "subscriber.queue-max-bytes", "16777216",
                "subscriber.send-buffer-bytes", "1024");
        // A stalled stream holds the shutdown open; a connection made before it asks for a stream during it.
        try (RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=held", 4096);
             Socket keptAlive = new Socket("127.0.0.1", server.port())) {
            stalled.awaitText(":ok", 5_000);
            echo(keptAlive);
            for (int i = 0; i < 3_000; i++) {
                server.publish("held", "z".repeat(1024));
            }
            int port = server.port();
            CompletableFuture<Boolean> stopping = CompletableFuture.supplyAsync(() -> server.server().shutdown());
            Await.until("new connections are refused", Duration.ofSeconds(8), () -> refused(port));
            ErrorMessage refusal = RefusedStream.check(keptAlive, "GET /eventhandler/events?eventType=late HTTP/1.1\r\n"
                    + "Host: x\r\nConnection: close\r\n\r\n", 1000);
            assertTrue(refusal.errorMessage().contains("shutting down"), refusal.errorMessage());
            assertFalse(stopping.isDone(), "answered while the server was still stopping");
            stalled.close();
            stopping.get();
        } finally {
            server.close();
        }
    }

    /** A request on a kept-alive connection, read to the end of its answer: the server holds the connection. */
    private static void echo(Socket socket) throws java.io.IOException {
        socket.getOutputStream().write("GET /eventhandler/echo HTTP/1.1\r\nHost: x\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
        socket.setSoTimeout(10_000);
        StringBuilder answer = new StringBuilder();
        while (!answer.toString().endsWith("Got it!")) {
            int b = socket.getInputStream().read();
            if (b < 0) {
                throw new AssertionError("the connection closed after: " + answer);
            }
            answer.append((char) b);
        }
    }

    private static boolean opens(TestServer server, String query) {
        try (RawSubscriber subscriber = RawSubscriber.open(server.port(), query, 0)) {
            subscriber.awaitText("event: eventhandler.", 10_000);
            return subscriber.received().contains("event: eventhandler.open\n");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aPublishThatWouldCreateATopicPastTheLimitAnswers503() throws Exception {
        try (TestServer server = TestServer.start("topic.max-count", "2");
             SseStream one = server.subscribe("?eventType=one");
             SseStream two = server.subscribe("?eventType=two")) {
            Reply refused = server.post("/eventhandler/publish", "{\"eventType\":\"three\",\"payload\":\"x\"}");
            assertEquals(503, refused.statusCode());
            assertTrue(refused.body().contains("topic.max-count"), refused.body());
            assertEquals(200, server.post("/eventhandler/publish", "{\"eventType\":\"ONE\",\"payload\":\"x\"}").statusCode());
        }
    }
}

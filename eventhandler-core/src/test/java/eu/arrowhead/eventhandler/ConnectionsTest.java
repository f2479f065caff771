package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** Connection lifetimes: kept-alive publishers, subscribers that stop reading, topics nobody uses. */
class ConnectionsTest {

    @Test
    void aKeptAliveConnectionHasNoRequestCap() throws Exception {
        try (TestServer server = TestServer.start();
             Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            String body = "{\"eventType\":\"kept.alive\",\"payload\":\"x\"}";
            // Grizzly's default would close the connection at the 256th request.
            for (int i = 0; i < 300; i++) {
                out.write(("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String head = readHead(in);
                assertTrue(head.startsWith("HTTP/1.1 200"), "request " + i + ": " + head);
                assertFalse(head.toLowerCase(Locale.ROOT).contains("connection: close"), "request " + i + ": " + head);
                in.readNBytes(contentLength(head));
            }
            assertEquals(2.0, server.metric("eventhandler_connections_accepted_total"),
                    "the 300 publishes and this scrape: two connections");
        }
    }

    @Test
    void aSubscriberWhoseSocketAcceptsNothingIsCutOffAfterTheWriteTimeout() throws Exception {
        try (TestServer server = TestServer.start("subscriber.write-timeout-seconds", "1",
                "subscriber.queue-max-bytes", "134217728", "subscriber.total-queue-max-bytes", "134217728",
                "subscriber.send-buffer-bytes", "1024");
             RawSubscriber stalled = RawSubscriber.open(server.port(), "?eventType=blocked", 4096)) {
            stalled.awaitText(":ok", 5_000);
            String kilobyte = "y".repeat(1024);
            // Enough to fill the socket buffers on both ends, far from the queue's capacity.
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (server.metric("eventhandler_subscriber_disconnects_total{reason=\"write_timeout\"}") < 1) {
                assertTrue(System.nanoTime() < deadline, "never timed out");
                for (int i = 0; i < 500; i++) {
                    server.publish("blocked", kilobyte);
                }
            }
            assertTrue(stalled.drainUntilClosed(10_000), "the connection was closed");
        }
    }

    @Test
    void anIdleTopicWithoutSubscribersIsRemovedAndAResumeAcrossItIsReported() throws Exception {
        try (TestServer server = TestServer.start("topic.idle-seconds", "1")) {
            long id = server.publish("short.lived", "x");
            try (SseStream kept = server.subscribe("?eventType=kept")) {
                Await.until("the idle topic is removed", Duration.ofSeconds(10),
                        () -> server.topic("short.lived").isEmpty());
                assertTrue(server.topic("kept").isPresent(), "a topic with a subscriber stays");
            }
            try (SseStream resumed = server.subscribe("?eventType=short.lived&lastEventId=0")) {
                SseStream.Frame gap = resumed.nextEvent(Duration.ofSeconds(5));
                assertEquals(ReplayGap.EVENT_TYPE, gap.event());
                assertTrue(gap.data().contains("\"resumedAfterId\":" + id), gap.data());
            }
        }
    }

    private static String readHead(InputStream in) throws Exception {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new AssertionError("connection closed after: " + head);
            }
            head.write(b);
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        throw new AssertionError("no Content-Length in " + head);
    }
}

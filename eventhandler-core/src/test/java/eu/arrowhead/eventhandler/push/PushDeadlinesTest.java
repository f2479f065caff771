package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What push delivery does when subscribers are slow or failing, and what it says about it: a deadline that bounds
 * a whole POST, a log that cannot be flooded by a failing subscriber, and a stop without stack traces.
 */
class PushDeadlinesTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
            org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> log = new ListAppender<>();

    @BeforeEach
    void captureTheLog() {
        log.start();
        root.addAppender(log);
    }

    @AfterEach
    void releaseTheLog() {
        root.detachAppender(log);
    }

    private List<ILoggingEvent> pushLines() {
        synchronized (log) {
            return log.list.stream().filter(event -> event.getLoggerName().endsWith("PushSender")).toList();
        }
    }

    /**
     * A subscriber that answers a byte at a time never lets an inactivity timeout expire (it held each POST for
     * about 140 s): the deadline counts from the POST's start.
     */
    @Test
    void aSubscriberTricklingItsAnswerIsCutOffAtTheResponseTimeout() throws Exception {
        try (TricklingSubscriber trickling = new TricklingSubscriber();
             TestServer server = PushDeliveryTest.server("push.response-timeout-seconds", "1", "push.max-retries", "1")) {
            PushDeliveryTest.subscribe(server, trickling.subscription());
            long start = System.nanoTime();
            server.publish("slow", "one");
            Await.until("the POST is given up", WAIT,
                    () -> server.metric("eventhandler_push_dropped_events_total{reason=\"retries-exhausted\"}") == 1);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < 8_000, "given up after two tries " + tookMillis + " ms, with an answer still trickling in");
            assertTrue(pushLines().stream().anyMatch(event -> event.getFormattedMessage()
                    .contains("push.response-timeout-seconds")), "the failure names the deadline");
        }
    }

    @Test
    void aRunOfFailuresIsLoggedOnceWhenItStartsAndOnceWhenItEnds() throws Exception {
        try (StandInSubscriber failing = StandInSubscriber.answering(request -> request <= 20 ? 500 : 200);
             TestServer server = PushDeliveryTest.server("push.max-retries", "1")) {
            PushDeliveryTest.subscribe(server, failing.subscription("consumer", "flaky", ""));
            for (int i = 0; i < 15; i++) {
                server.publish("flaky", "e" + i);
            }
            Await.until("20 failed POSTs and then 200s", WAIT, () -> failing.requests() >= 21);
            server.publish("flaky", "after");
            failing.awaitEvents(1);
            Await.until("the end of the run is logged", WAIT, () -> pushLines().size() >= 2);
            List<ILoggingEvent> lines = pushLines().stream().filter(event -> event.getLevel().isGreaterOrEqual(Level.INFO))
                    .toList();
            assertEquals(2, lines.size(), "one line at the start and one at the end: " + lines);
            assertEquals(Level.WARN, lines.get(0).getLevel());
            assertTrue(lines.get(0).getFormattedMessage().contains("status 500"), lines.get(0).getFormattedMessage());
            assertTrue(lines.get(1).getFormattedMessage().contains("works again after 20 failed POSTs"),
                    lines.get(1).getFormattedMessage());
        }
    }

    @Test
    void aStopWithPostsInFlightLogsNoStackTrace() throws Exception {
        try (StandInSubscriber hanging = StandInSubscriber.hanging()) {
            try (TestServer server = PushDeliveryTest.server()) {
                PushDeliveryTest.subscribe(server, hanging.subscription("consumer", "stuck", ""));
                server.publish("stuck", "one");
                Await.until("the POST is in flight", WAIT, () -> hanging.requests() == 1);
            }
        }
        synchronized (log) {
            for (ILoggingEvent event : log.list) {
                assertNull(event.getThrowableProxy(), "a stack trace at the stop: " + event.getFormattedMessage());
            }
        }
    }

    /** Reads a POST, then answers it a byte every 100 ms, never completing the answer. */
    private static final class TricklingSubscriber implements AutoCloseable {
        private final ServerSocket listener;
        private final Thread thread;

        TricklingSubscriber() throws IOException {
            listener = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
            thread = new Thread(this::serve, "trickling-subscriber");
            thread.setDaemon(true);
            thread.start();
        }

        String subscription() {
            return "{\"eventType\":\"slow\",\"subscriberSystem\":{\"systemName\":\"slowpoke\",\"address\":\"127.0.0.1\","
                    + "\"port\":" + listener.getLocalPort() + "},\"notifyUri\":\"/notify\"}";
        }

        private void serve() {
            while (!listener.isClosed()) {
                try (Socket socket = listener.accept()) {
                    InputStream in = socket.getInputStream();
                    in.read(new byte[65536]);
                    OutputStream out = socket.getOutputStream();
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    while (!listener.isClosed()) {
                        out.write(' ');
                        out.flush();
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                    }
                } catch (IOException e) {
                    // the client gave up on this connection: take the next
                }
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}

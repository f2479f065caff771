package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** close() returns at once whatever the subscription is doing, leaves no thread and calls nothing more. */
class CloseTest {
    private static final Duration PROMPTLY = Duration.ofSeconds(1);

    @Test
    void closeDuringTheBackoffWait() throws Exception {
        Recorder recorder = new Recorder();
        EventSubscriber subscriber = recorder.builder(URI.create("http://127.0.0.1:" + TestServer.freePort()))
                .reconnectBackoff(Duration.ofSeconds(5), Duration.ofSeconds(10))
                .subscribe();
        recorder.awaitDisconnects(1);
        assertTrue(recorder.reconnectDelays.get(0).compareTo(Duration.ofSeconds(4)) >= 0);

        assertClosesPromptly(subscriber, recorder);
        assertEquals(1, recorder.disconnects.size());
    }

    @Test
    void closeWhileConnectedAndIdle() throws Exception {
        try (TestServer server = TestServer.start()) {
            Recorder recorder = new Recorder();
            EventSubscriber subscriber = recorder.builder(server.server().baseUri()).subscribe();
            recorder.awaitConnects(1);
            assertTrue(subscriber.isConnected());

            assertClosesPromptly(subscriber, recorder);
            assertFalse(subscriber.isConnected());
            assertEquals(List.of(), recorder.disconnects);
            // The server notices that the stream went away.
            Await.until("the server to drop the subscriber", Recorder.DEADLINE,
                    () -> server.get("/eventhandler/mgmt/topics").body().contains("\"subscribers\":0"));
        }
    }

    @Test
    void closeDuringAConnectThatHangs() throws Exception {
        // A listening socket that never accepts, with its backlog full: further connects get no answer.
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<Socket> fillers = fillBacklog(silent);
            assumeTrue(fillers != null, "this system refuses connections to a full accept queue instead of ignoring them");
            try {
                Recorder recorder = new Recorder();
                EventSubscriber subscriber = recorder.builder(URI.create("http://127.0.0.1:" + silent.getLocalPort()))
                        .connectTimeout(Duration.ofSeconds(30))
                        .subscribe();
                Thread thread = subscriberThread(subscriber);
                Await.until("the subscription to be stuck connecting", Recorder.DEADLINE,
                        () -> Arrays.stream(thread.getStackTrace()).anyMatch(f -> f.getMethodName().equals("connect")
                                && f.getClassName().startsWith("java.net.")));
                recorder.thread = thread;

                assertClosesPromptly(subscriber, recorder);
                assertEquals(List.of(), recorder.disconnects);
            } finally {
                for (Socket filler : fillers) {
                    filler.close();
                }
            }
        }
    }

    @Test
    void closeFromTheListenerStopsDeliveryAtOnce() throws Exception {
        try (TestServer server = TestServer.start()) {
            AtomicReference<EventSubscriber> self = new AtomicReference<>();
            Recorder recorder = new Recorder(event -> self.get().close());
            self.set(recorder.builder(server.server().baseUri()).subscribe());
            recorder.awaitConnects(1);
            // Two events in one write: the second is already read when the listener closes on the first.
            Reply reply = server.post("/eventhandler/publish/batch",
                    "[{\"eventType\":\"temperature\",\"payload\":\"1\"},{\"eventType\":\"temperature\",\"payload\":\"2\"}]");
            assertEquals(200, reply.statusCode(), reply.body());
            recorder.awaitThreadEnd();

            assertEquals(List.of("1"), recorder.payloads());
            assertEquals(1, recorder.stops.get());
            assertNull(recorder.stopCauses.get(0));
        }
    }

    private static void assertClosesPromptly(EventSubscriber subscriber, Recorder recorder) {
        Thread thread = recorder.thread;
        long start = System.nanoTime();
        subscriber.close();
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertTrue(took.compareTo(PROMPTLY) < 0, "close() took " + took);
        assertFalse(thread.isAlive(), thread + " is still running");
        assertFalse(Recorder.threadRunning(thread.getName()));
        assertEquals(1, recorder.stops.get());
        assertNull(recorder.stopCauses.get(0));
        subscriber.close();
        assertEquals(1, recorder.stops.get(), "a second close() called onStopped again");
    }

    /** The subscription's thread: the one named eventhandler-subscriber-N that it started. */
    private static Thread subscriberThread(EventSubscriber subscriber) throws InterruptedException {
        AtomicReference<Thread> found = new AtomicReference<>();
        Await.until("the subscription's thread", Recorder.DEADLINE, () -> {
            Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("eventhandler-subscriber-") && t.isAlive())
                    .max((a, b) -> Integer.compare(number(a), number(b)))
                    .ifPresent(found::set);
            return found.get() != null;
        });
        return found.get();
    }

    private static int number(Thread thread) {
        return Integer.parseInt(thread.getName().substring(thread.getName().lastIndexOf('-') + 1));
    }

    /**
     * Connects to the socket until a connect goes unanswered (as Linux does when the accept queue is full).
     *
     * @return the connected sockets, or null if the system refused a connect instead
     */
    private static List<Socket> fillBacklog(ServerSocket server) throws Exception {
        List<Socket> fillers = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 200);
                fillers.add(socket);
            } catch (SocketTimeoutException full) {
                socket.close();
                return fillers;
            } catch (ConnectException refused) {
                socket.close();
                break;
            }
        }
        for (Socket filler : fillers) {
            filler.close();
        }
        return null;
    }
}

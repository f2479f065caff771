package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TcpProxy;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reconnect loop against real failures: a server that drops us, goes away, never was, or goes silent. */
class ReconnectTest {

    @Test
    void aSubscriberTheServerDropsForBeingSlowResumesWithoutLossOrDuplicates() throws Exception {
        try (TestServer server = TestServer.start("subscriber.queue-max-bytes", "4096",
                "subscriber.send-buffer-bytes", "1024",
                "replay.window-events", "5000",
                "replay.window-bytes", "67108864")) {
            CountDownLatch published = new CountDownLatch(1);
            Recorder recorder = new Recorder(event -> {
                try {
                    // Hold the first event until everything is published: the server's queue for us overflows.
                    published.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try (EventSubscriber subscriber = recorder.builder(server.server().baseUri()).subscribe()) {
                recorder.awaitConnects(1);
                // 4 KB payloads: 8 MB in all, far more than socket buffers hold for a reader that stopped.
                String padding = "x".repeat(4000);
                List<Long> ids = new ArrayList<>(publishBatch(server, 0, 1, padding));
                recorder.awaitEvents(1);
                // The listener now holds the first event, and the subscription reads nothing more.
                for (int first = 1; first < 2000; first += 100) {
                    ids.addAll(publishBatch(server, first, Math.min(100, 2000 - first), padding));
                }
                published.countDown();
                recorder.awaitEvents(2000);

                assertEquals(ids, recorder.ids());
                assertTrue(recorder.payloads().get(1999).startsWith("1999-"));
                assertTrue(recorder.disconnects.size() >= 1, "the server did not drop the slow subscriber");
                assertTrue(recorder.connects.get() >= 2);
                assertEquals(List.of(), recorder.gaps);
                Await.until("connected again", Recorder.DEADLINE, subscriber::isConnected);
            }
        }
    }

    @Test
    void afterTheServerRestartsOnTheSamePortNewEventsArriveOnce() throws Exception {
        Recorder recorder = new Recorder();
        TestServer first = TestServer.start();
        try (EventSubscriber subscriber = recorder.builder(first.server().baseUri()).subscribe()) {
            int port = first.port();
            recorder.awaitConnects(1);
            long before = 0;
            for (int i = 0; i < 3; i++) {
                before = first.publish("temperature", "before-" + i);
            }
            recorder.awaitEvents(3);
            first.close();

            try (TestServer second = TestServer.start("server.port", Integer.toString(port))) {
                // The new server's sequence starts again at 1, below what we saw: it says so in a gap notice.
                Await.until("the replay-gap notice", Recorder.DEADLINE, () -> !recorder.gaps.isEmpty());
                assertEquals(List.of(new ReplayGap(before, 0)), recorder.gaps);
                assertTrue(recorder.gaps.get(0).sequenceRestarted());
                assertEquals(OptionalLong.empty(), recorder.gaps.get(0).maxMissingEvents(), "unknowable");
                long after1 = second.publish("temperature", "after-0");
                long after2 = second.publish("temperature", "after-1");
                recorder.awaitEvents(5);

                assertTrue(after1 <= before, "the new server's ids should start again, got " + after1);
                assertEquals(List.of("before-0", "before-1", "before-2", "after-0", "after-1"), recorder.payloads());
                assertEquals(List.of(after1, after2), recorder.ids().subList(3, 5));
                assertEquals(after2, subscriber.lastEventId().orElseThrow());
            }
        } finally {
            first.close(); // nothing left to do unless the test failed before closing it
        }
    }

    @Test
    void acrossAGracefulRestartOfAServerWithAnEventStoreNothingIsLostOrRepeated(@TempDir Path data) throws Exception {
        String[] store = {"store.mode", "async", "store.url", "jdbc:h2:file:" + data.resolve("log")};
        Recorder recorder = new Recorder();
        TestServer first = TestServer.start(store);
        List<Long> published = new ArrayList<>();
        try (EventSubscriber subscriber = recorder.builder(first.server().baseUri()).subscribe()) {
            int port = first.port();
            recorder.awaitConnects(1);
            for (int i = 0; i < 50; i++) {
                published.add(first.publish("temperature", "before-" + i));
            }
            first.close();

            String[] samePort = Arrays.copyOf(store, store.length + 2);
            samePort[store.length] = "server.port";
            samePort[store.length + 1] = Integer.toString(port);
            try (TestServer second = TestServer.start(samePort)) {
                // Published whether or not the subscriber has reconnected yet: it must get them either way.
                for (int i = 0; i < 50; i++) {
                    published.add(second.publish("temperature", "after-" + i));
                }
                recorder.awaitEvents(100);
                assertEquals(published, recorder.ids());
                assertEquals(51L, published.get(50), "the sequence goes on after the restart");
                assertEquals(List.of(), recorder.gaps);
                assertEquals(published.get(99), subscriber.lastEventId().orElseThrow());
            }
        } finally {
            first.close();
        }
    }

    @Test
    void connectsOnceTheServerStartsAfterRefusedConnections() throws Exception {
        int port = TestServer.freePort();
        Recorder recorder = new Recorder();
        try (EventSubscriber subscriber = recorder.builder(java.net.URI.create("http://127.0.0.1:" + port)).subscribe()) {
            recorder.awaitDisconnects(2);
            assertInstanceOf(ConnectException.class, recorder.disconnects.get(0));
            assertTrue(!subscriber.isConnected());

            try (TestServer server = TestServer.start("server.port", Integer.toString(port))) {
                recorder.awaitConnects(1);
                assertTrue(subscriber.isConnected());
                long id = server.publish("temperature", "first");
                recorder.awaitEvents(1);
                assertEquals(List.of(id), recorder.ids());
            }
        }
    }

    @Test
    void aSilentStreamTimesOutAndIsReplacedResumingAfterTheLastEvent() throws Exception {
        String event = "id: 7\nevent: temperature\ndata: {\"id\":7,\"eventType\":\"temperature\",\"payload\":\"21.5\"}\n\n";
        try (RawHttpServer raw = RawHttpServer.start(n -> RawHttpServer.eventStream(":ok\n\n" + (n == 0 ? event : "")))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri())
                    .readTimeout(Duration.ofMillis(300))
                    .subscribe()) {
                Await.until("a second request", Recorder.DEADLINE, () -> raw.requests().size() >= 2);
                recorder.awaitDisconnects(1);

                assertInstanceOf(SocketTimeoutException.class, recorder.disconnects.get(0));
                assertEquals(List.of("21.5"), recorder.payloads());
                List<String> requests = raw.requests();
                assertTrue(requests.get(0).startsWith("GET /eventhandler/events?eventType=temperature HTTP/1.1\r\n"),
                        requests.get(0));
                assertTrue(requests.get(0).toLowerCase(java.util.Locale.ROOT).contains("\r\naccept: text/event-stream\r\n"));
                assertTrue(!requests.get(0).contains("Last-Event-ID"), requests.get(0));
                assertTrue(requests.get(1).contains("\r\nLast-Event-ID: 7\r\n"), requests.get(1));
                assertTrue(recorder.connects.get() >= 1);
                assertEquals(7, subscriber.lastEventId().orElseThrow());
            }
        }
    }

    @Test
    void resumesFromAPositionAnOlderServerAnnouncesWithAnIdWithoutData() throws Exception {
        try (RawHttpServer raw = RawHttpServer.start(n -> n == 0 ? RawHttpServer.endedEventStream(":ok\n\nid: 41\n\n")
                : RawHttpServer.eventStream(":ok\n\n"))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                Await.until("a second request", Recorder.DEADLINE, () -> raw.requests().size() >= 2);

                assertTrue(raw.requests().get(1).contains("\r\nLast-Event-ID: 41\r\n"), raw.requests().get(1));
                assertEquals(41, subscriber.lastEventId().orElseThrow());
                assertInstanceOf(EOFException.class, recorder.disconnects.get(0));
                assertEquals(List.of(), recorder.events);
            }
        }
    }

    @Test
    void resumesFromWhereTheOpeningNoticeSaysTheStreamStarts() throws Exception {
        String opening = ":ok\nretry: 1000\nid: 41\nevent: eventhandler.open\ndata: {\"lastEventId\":41}\n\n";
        try (RawHttpServer raw = RawHttpServer.start(n -> n == 0 ? RawHttpServer.endedEventStream(opening)
                : RawHttpServer.eventStream(":ok\nretry: 1000\n\n"))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                Await.until("a second request", Recorder.DEADLINE, () -> raw.requests().size() >= 2);

                assertTrue(raw.requests().get(1).contains("\r\nLast-Event-ID: 41\r\n"), raw.requests().get(1));
                assertEquals(41, subscriber.lastEventId().orElseThrow());
                assertEquals(List.of(), recorder.events, "the notice is not an event");
                assertInstanceOf(EOFException.class, recorder.disconnects.get(0));
            }
        }
    }

    @Test
    void aRefusalStreamIsA503ThatIsRetriedAfterItsRetryField() throws Exception {
        String json = "{\"errorMessage\":\"the Event Handler already serves its maximum of 1 subscribers"
                + " (subscriber.max-count)\",\"errorCode\":503,\"exceptionType\":\"UNAVAILABLE\","
                + "\"origin\":\"/eventhandler/events\"}";
        String refusal = RawHttpServer.endedEventStream("retry: 1500\nevent: eventhandler.unavailable\ndata: " + json + "\n\n");
        try (RawHttpServer raw = RawHttpServer.start(n -> n == 0 ? refusal : RawHttpServer.eventStream(":ok\n\n"))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                recorder.awaitConnects(1);

                assertEquals(1, recorder.connects.get(), "a refusal is not a connection");
                long waited = raw.acceptedNanos(1) - raw.acceptedNanos(0);
                assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(1500), "reconnected after " + waited / 1_000_000 + " ms");
                SubscriptionRefusedException refused = assertInstanceOf(SubscriptionRefusedException.class,
                        recorder.disconnects.get(0));
                assertEquals(503, refused.statusCode());
                assertEquals("HTTP 503: the Event Handler already serves its maximum of 1 subscribers"
                        + " (subscriber.max-count)", refused.getMessage());
                assertEquals("UNAVAILABLE", refused.errorMessage().orElseThrow().exceptionType());
                assertEquals(Duration.ofMillis(1500), recorder.reconnectDelays.get(0));
                assertEquals(List.of(), recorder.stopCauses);
                assertTrue(subscriber.isConnected());
            }
        }
    }

    @Test
    void aRefusalStreamWithoutRetryWaitsForRetryAfter() throws Exception {
        String refusal = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
                + "event: eventhandler.unavailable\ndata: not an ErrorMessage\n\n";
        try (RawHttpServer raw = RawHttpServer.start(n -> n == 0 ? refusal : RawHttpServer.eventStream(":ok\n\n"))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                recorder.awaitConnects(1);

                SubscriptionRefusedException refused = assertInstanceOf(SubscriptionRefusedException.class,
                        recorder.disconnects.get(0));
                assertEquals("HTTP 503: not an ErrorMessage", refused.getMessage());
                assertEquals(Duration.ofSeconds(1), recorder.reconnectDelays.get(0));
            }
        }
    }

    @Test
    void atTheServersSubscriberLimitItComesBackAndReceivesEventsOnceAPlaceIsFree() throws Exception {
        try (TestServer server = TestServer.start("subscriber.max-count", "1", "sse.retry-millis", "200")) {
            Recorder recorder = new Recorder();
            try (RawSubscriber holder = RawSubscriber.open(server.port(), "?eventType=other", 0)) {
                holder.awaitText(":ok", 5_000);
                try (EventSubscriber subscriber = recorder.builder(server.server().baseUri()).subscribe()) {
                    recorder.awaitDisconnects(2);
                    SubscriptionRefusedException refused = assertInstanceOf(SubscriptionRefusedException.class,
                            recorder.disconnects.get(0));
                    assertEquals(503, refused.statusCode());
                    assertTrue(refused.getMessage().contains("subscriber.max-count"), refused.getMessage());
                    assertTrue(recorder.reconnectDelays.get(0).compareTo(Duration.ofMillis(200)) >= 0);
                    assertEquals(0, recorder.connects.get());

                    holder.close();
                    recorder.awaitConnects(1);
                    long id = server.publish("temperature", "after");
                    recorder.awaitEvents(1);
                    assertEquals(List.of(id), recorder.ids());
                    assertEquals(List.of(), recorder.stopCauses);
                }
            }
        }
    }

    @Test
    void aConnectionCutBeforeTheFirstEventResumesWithoutLoss() throws Exception {
        try (TestServer server = TestServer.start();
             TcpProxy proxy = new TcpProxy("127.0.0.1", server.port())) {
            for (int i = 0; i < 5; i++) {
                server.publish("temperature", "before-" + i);
            }
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(java.net.URI.create("http://127.0.0.1:" + proxy.port()))
                    .subscribe()) {
                recorder.awaitConnects(1);
                assertEquals(5, subscriber.lastEventId().orElseThrow(), "the opening notice's resume point");
                proxy.cut();
                recorder.awaitDisconnects(2);
                // Published while the subscriber cannot reach the server, before it has seen any event.
                List<Long> missed = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    missed.add(server.publish("temperature", "missed-" + i));
                }
                proxy.restore();
                recorder.awaitEvents(100);
                assertEquals(missed, recorder.ids());
                assertEquals(List.of(), recorder.gaps);
            }
        }
    }

    @Test
    void waitsAtLeastAsLongAsRetryAfterSaysOnA503FromAnOlderServer() throws Exception {
        String busy = RawHttpServer.error(503, "Service Unavailable", "{\"errorMessage\":\"the Event Handler already"
                + " serves its maximum of 1 subscribers\",\"errorCode\":503,\"exceptionType\":\"UNAVAILABLE\"}",
                "Retry-After: 1");
        try (RawHttpServer raw = RawHttpServer.start(n -> n == 0 ? busy : RawHttpServer.eventStream(":ok\n\n"))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                recorder.awaitConnects(1);

                assertEquals(2, raw.accepted());
                long waited = raw.acceptedNanos(1) - raw.acceptedNanos(0);
                assertTrue(waited >= TimeUnit.SECONDS.toNanos(1), "reconnected after " + waited / 1_000_000 + " ms");
                SubscriptionRefusedException refused = assertInstanceOf(SubscriptionRefusedException.class,
                        recorder.disconnects.get(0));
                assertEquals(503, refused.statusCode());
                assertEquals(Duration.ofSeconds(1), recorder.reconnectDelays.get(0));
                assertTrue(subscriber.isConnected());
            }
        }
    }

    @Test
    void aPermanentRefusalEndsTheSubscriptionWithTheServersMessage() throws Exception {
        String json = "{\"errorMessage\":\"eventType may contain only letters, digits and . _ - : /\",\"errorCode\":400,"
                + "\"exceptionType\":\"INVALID_PARAMETER\",\"origin\":\"/eventhandler/events\"}";
        try (RawHttpServer raw = RawHttpServer.start(n -> RawHttpServer.error(400, "Bad Request", json))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                recorder.awaitThreadEnd();

                assertEquals(1, recorder.stops.get());
                SubscriptionRefusedException refused = assertInstanceOf(SubscriptionRefusedException.class,
                        recorder.stopCauses.get(0));
                assertEquals(400, refused.statusCode());
                assertEquals("HTTP 400: eventType may contain only letters, digits and . _ - : /", refused.getMessage());
                assertEquals("INVALID_PARAMETER", refused.errorMessage().orElseThrow().exceptionType());
                assertEquals(1, raw.accepted());
                assertEquals(List.of(), recorder.disconnects);
                assertTrue(!subscriber.isConnected());
            }
            // close() after the end calls nothing more.
            assertEquals(1, recorder.stops.get());
        }
    }

    @Test
    void aMalformedEventIsSkippedAndTheNextOneDelivered() throws Exception {
        String stream = ":ok\n\nid: 1\nevent: temperature\ndata: not json\n\n"
                + "id: 2\nevent: temperature\n"
                + "data: {\"id\":2,\"eventType\":\"temperature\",\"payload\":\"ok\",\"newField\":1}\n\n";
        try (RawHttpServer raw = RawHttpServer.start(n -> RawHttpServer.eventStream(stream))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(raw.baseUri()).subscribe()) {
                recorder.awaitEvents(1);
                Event event = recorder.events.get(0);
                assertEquals(2, event.id());
                assertEquals("ok", event.payload());
                assertNull(event.source());
                assertEquals(2, subscriber.lastEventId().orElseThrow());
            }
        }
    }

    /** Publishes events with payloads "first-padding" to "first+count-1-padding" in one request. */
    private static List<Long> publishBatch(TestServer server, int first, int count, String padding) {
        StringJoiner events = new StringJoiner(",", "[", "]");
        for (int i = first; i < first + count; i++) {
            events.add("{\"eventType\":\"temperature\",\"payload\":\"" + i + "-" + padding + "\"}");
        }
        Reply reply = server.post("/eventhandler/publish/batch", events.toString());
        assertEquals(200, reply.statusCode(), reply.body());
        return Pattern.compile("\\d+").matcher(reply.body()).results().map(m -> Long.parseLong(m.group())).toList();
    }
}

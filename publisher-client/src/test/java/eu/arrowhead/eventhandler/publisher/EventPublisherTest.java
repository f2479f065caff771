package eu.arrowhead.eventhandler.publisher;

import static eu.arrowhead.eventhandler.publisher.TestSupport.baseUri;
import static eu.arrowhead.eventhandler.publisher.TestSupport.connectionsAccepted;
import static eu.arrowhead.eventhandler.publisher.TestSupport.event;
import static eu.arrowhead.eventhandler.publisher.TestSupport.failedPublish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The publisher against a real server: ids, delivery, order, connections, errors and closing. */
class EventPublisherTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final SystemRequest SENSOR = new SystemRequest("sensor-1", "127.0.0.1", 5000, null, null);

    private static TestServer server;

    @BeforeAll
    static void startServer() {
        server = TestServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Test
    void publishReturnsTheIdAndTheSubscriberReceivesTheEventWithTheDefaultSource() throws Exception {
        SystemRequest other = SystemRequest.named("gateway-7");
        try (SseStream stream = server.subscribe("?eventType=temperature");
             EventPublisher publisher = EventPublisher.builder(baseUri(server)).source(SENSOR).build()) {
            long id = publisher.publish(new EventPublishRequest("temperature", "21.5", Map.of("unit", "celsius"),
                    null, null));
            long ownSourceId = publisher.publish(new EventPublishRequest("temperature", "21.6", null, other, null));

            SseStream.Frame frame = stream.nextEvent(WAIT);
            assertEquals(Long.toString(id), frame.id());
            Event event = event(frame);
            assertEquals(id, event.id());
            assertEquals("21.5", event.payload());
            assertEquals(Map.of("unit", "celsius"), event.metaData());
            assertEquals(SENSOR, event.source(), "the default source is put on an event that has none");

            Event second = event(stream.nextEvent(WAIT));
            assertEquals(ownSourceId, second.id());
            assertEquals(other, second.source(), "an event's own source is kept");
        }
    }

    @Test
    void tenThousandSequentialPublishesOpenExactlyOneConnection() throws Exception {
        long before = connectionsAccepted(server);
        try (EventPublisher publisher = EventPublisher.builder(baseUri(server)).build()) {
            long previous = 0;
            for (int i = 0; i < 10_000; i++) {
                long id = publisher.publish(EventPublishRequest.of("sequential", Integer.toString(i)));
                assertTrue(id > previous, "id " + id + " after " + previous);
                previous = id;
            }
        }
        assertEquals(1, connectionsAccepted(server) - before, "TCP connections the publisher opened");
    }

    @Test
    void asyncPublishesCompleteAndArriveInCallOrder() throws Exception {
        int count = 1000;
        try (SseStream stream = server.subscribe("?eventType=async-order");
             EventPublisher publisher = EventPublisher.builder(baseUri(server)).build()) {
            List<CompletableFuture<Long>> futures = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                futures.add(publisher.publishAsync(EventPublishRequest.of("async-order", Integer.toString(i))));
            }
            List<Long> ids = new ArrayList<>(count);
            for (CompletableFuture<Long> future : futures) {
                ids.add(future.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            }
            for (int i = 1; i < count; i++) {
                assertTrue(ids.get(i) > ids.get(i - 1), "call " + i + " got id " + ids.get(i) + " after "
                        + ids.get(i - 1));
            }
            List<SseStream.Frame> frames = stream.events(count, WAIT);
            for (int i = 0; i < count; i++) {
                Event event = event(frames.get(i));
                assertEquals(ids.get(i), event.id());
                assertEquals(Integer.toString(i), event.payload());
            }
        }
    }

    @Test
    void batchIsPublishedWholeWithConsecutiveIdsOrNotAtAll() throws Exception {
        try (EventPublisher publisher = EventPublisher.builder(baseUri(server)).build()) {
            List<Long> ids = publisher.publishBatch(List.of(
                    EventPublishRequest.of("batch", "a"),
                    EventPublishRequest.of("batch", "b"),
                    EventPublishRequest.of("batch-other", "c"),
                    EventPublishRequest.of("batch", "d")));
            assertEquals(4, ids.size());
            for (int i = 1; i < ids.size(); i++) {
                assertEquals(ids.get(0) + i, ids.get(i), "ids " + ids);
            }

            PublishException refused = assertThrows(PublishException.class, () -> publisher.publishBatch(List.of(
                    EventPublishRequest.of("batch", "e"),
                    EventPublishRequest.of("bad type", "f"))));
            assertEquals(400, refused.statusCode());
            assertTrue(refused.getMessage().startsWith("batch publish refused with 400: event 1: eventType"),
                    refused.getMessage());

            long next = publisher.publish(EventPublishRequest.of("batch", "g"));
            assertEquals(ids.get(3) + 1, next, "nothing of the refused batch was published");
            assertEquals(List.of(), publisher.publishBatch(List.of()));
        }
    }

    @Test
    void refusedEventIsReportedWithTheServersErrorAndNotRetried() throws Exception {
        // A retry would wait 10 s before its second attempt.
        RetryPolicy patient = RetryPolicy.of(5, Duration.ofSeconds(10), Duration.ofSeconds(10));
        try (EventPublisher publisher = EventPublisher.builder(baseUri(server)).retryPolicy(patient).build()) {
            TestSupport.Failure failure = failedPublish(publisher, EventPublishRequest.of("bad type", "x"));
            PublishException e = failure.exception();

            assertEquals(400, e.statusCode());
            assertFalse(e.retryable());
            ErrorMessage error = e.errorMessage().orElseThrow();
            assertEquals(400, error.errorCode());
            assertEquals("BAD_PAYLOAD", error.exceptionType());
            assertTrue(error.errorMessage().startsWith("eventType may contain only"), error.errorMessage());
            assertEquals("publish refused with 400: " + error.errorMessage(), e.getMessage());
            assertTrue(failure.took().compareTo(Duration.ofSeconds(5)) < 0,
                    "a 400 is final, yet the call took " + failure.took());

            // The server closes the connection after a 400; the publisher opens another.
            long id = publisher.publish(EventPublishRequest.of("after-refusal", "x"));
            assertEquals(1, TestSupport.publishedTo(server, "after-refusal"));
            assertTrue(id > 0);
        }
    }

    @Test
    void threadsSharingOnePublisherAllSucceedOnAtMostMaxConnections() throws Exception {
        int threads = 8;
        int each = 500;
        long before = connectionsAccepted(server);
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (EventPublisher publisher = EventPublisher.builder(baseUri(server)).maxConnections(4).build()) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String type = "shared-" + t;
                workers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        ids.add(publisher.publish(EventPublishRequest.of(type, Integer.toString(i))));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> worker : workers) {
                worker.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(threads * each, ids.size(), "every publish got an id of its own");
        long opened = connectionsAccepted(server) - before;
        assertTrue(opened >= 1 && opened <= 4, "connections opened: " + opened);
    }

    @Test
    void closeIsIdempotentAndLaterCallsAreRefused() {
        EventPublisher publisher = EventPublisher.builder(baseUri(server)).build();
        publisher.close();
        publisher.close();
        EventPublishRequest event = EventPublishRequest.of("closed", "x");
        assertEquals("publisher is closed",
                assertThrows(IllegalStateException.class, () -> publisher.publish(event)).getMessage());
        assertThrows(IllegalStateException.class, () -> publisher.publishAsync(event));
        assertThrows(IllegalStateException.class, () -> publisher.publishBatch(List.of(event)));
    }

    @Test
    void closePublishesWhatIsQueuedThenEndsTheThread() throws Exception {
        Set<Thread> before = TestSupport.publisherThreads();
        List<CompletableFuture<Long>> futures;
        Set<Thread> started;
        EventPublisher publisher = EventPublisher.builder(baseUri(server)).build();
        try (publisher) {
            futures = IntStream.range(0, 200)
                    .mapToObj(i -> publisher.publishAsync(EventPublishRequest.of("queued", Integer.toString(i))))
                    .toList();
            started = TestSupport.publisherThreads();
            started.removeAll(before);
        }
        assertEquals(1, started.size(), "threads started by one publisher: " + started);
        assertTrue(started.iterator().next().isDaemon());

        Set<Long> ids = new HashSet<>();
        for (CompletableFuture<Long> future : futures) {
            assertTrue(future.isDone(), "close returned before a queued publish completed");
            ids.add(future.join());
        }
        assertEquals(200, ids.size());
        Await.until("the publisher's thread ends", WAIT, () -> started.stream().noneMatch(Thread::isAlive));
    }

    @Test
    void closeWaitsForQueuedPublishesNoLongerThanTheReadTimeout() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            EventPublisher publisher = EventPublisher.builder(silent.uri())
                    .readTimeout(Duration.ofMillis(300)).retryPolicy(RetryPolicy.NONE).build();
            // Each would take the read timeout: 3 s for all of them.
            List<CompletableFuture<Long>> futures = IntStream.range(0, 10)
                    .mapToObj(i -> publisher.publishAsync(EventPublishRequest.of("hanging", Integer.toString(i))))
                    .toList();
            long start = System.nanoTime();
            publisher.close();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(Duration.ofSeconds(2)) < 0, "close took " + took);

            for (CompletableFuture<Long> future : futures) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> future.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                assertInstanceOf(PublishException.class, e.getCause());
            }
            PublishException last = (PublishException) assertThrows(ExecutionException.class,
                    () -> futures.get(9).get()).getCause();
            assertEquals("publish of hanging abandoned: the publisher was closed before the event could be sent",
                    last.getMessage());
            assertEquals(PublishException.Kind.NOT_SENT, last.kind(), "it never left the queue");
        }
    }
}

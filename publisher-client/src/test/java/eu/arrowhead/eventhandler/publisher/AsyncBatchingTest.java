package eu.arrowhead.eventhandler.publisher;

import static eu.arrowhead.eventhandler.publisher.TestSupport.loggedPayloads;
import static eu.arrowhead.eventhandler.publisher.TestSupport.startWithLog;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.JsonAnswer;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EventPublisher.Builder#maxAsyncBatch}: queued {@code publishAsync} events sent together, against a real
 * server that comes up while they wait, and against a stand-in for a server that has no batch endpoint.
 */
class AsyncBatchingTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path directory;

    @Test
    void eventsQueuedBehindTheOneInFlightGoTogetherInOrder() throws Exception {
        int port = TestServer.freePort();
        try (CapturedLog retries = CapturedLog.of(Retrier.class);
             EventPublisher publisher = publisherOn(port, 100)) {
            List<CompletableFuture<Long>> futures = queueBehindAnAbsentServer(publisher, retries,
                    IntStream.range(0, 250).mapToObj(i -> EventPublishRequest.of("batched", Integer.toString(i)))
                            .toList());
            try (TestServer server = startWithLog(port, directory)) {
                List<Long> ids = new ArrayList<>();
                for (CompletableFuture<Long> future : futures) {
                    ids.add(future.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                }
                for (int i = 1; i < ids.size(); i++) {
                    assertTrue(ids.get(i) > ids.get(i - 1), "event " + i + " got id " + ids.get(i) + " after "
                            + ids.get(i - 1));
                }
                assertEquals(IntStream.range(0, 250).mapToObj(Integer::toString).toList(),
                        loggedPayloads(server, "batched"), "every event in the log once, in order");
                assertEquals(4, server.metric("eventhandler_publish_handling_seconds_count"),
                        "publish requests: the first event alone, then 100, 100 and 49 together");
            }
        }
    }

    @Test
    void aBatchWithAnEventTheServerRefusesIsSentAgainOneEventAtATime() throws Exception {
        int port = TestServer.freePort();
        try (CapturedLog retries = CapturedLog.of(Retrier.class);
             CapturedLog queue = CapturedLog.of(PublishQueue.class);
             EventPublisher publisher = publisherOn(port, 10)) {
            List<CompletableFuture<Long>> futures = queueBehindAnAbsentServer(publisher, retries, List.of(
                    EventPublishRequest.of("refusal", "first"), EventPublishRequest.of("refusal", "before"),
                    EventPublishRequest.of("bad type", "refused"), EventPublishRequest.of("refusal", "after")));
            try (TestServer server = startWithLog(port, directory)) {
                long before = futures.get(1).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                ExecutionException failed = assertThrows(ExecutionException.class,
                        () -> futures.get(2).get(WAIT.toSeconds(), TimeUnit.SECONDS));
                PublishException refused = assertInstanceOf(PublishException.class, failed.getCause());
                assertEquals(PublishException.Kind.REFUSED, refused.kind());
                assertEquals(400, refused.statusCode());
                assertTrue(refused.getMessage().startsWith("publish refused with 400: eventType"),
                        refused.getMessage());
                long after = futures.get(3).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertTrue(futures.get(0).get() < before && before < after, "ids in call order");
                assertEquals(List.of("first", "before", "after"), loggedPayloads(server, "refusal"));
                assertTrue(queue.contains("a batch of 3 events was refused; sending them one at a time"),
                        "the three queued events were sent as a batch first: " + queue.messages);
            }
        }
    }

    @Test
    void aServerWithLowerLimitsGetsSmallerBatches() throws Exception {
        int port = TestServer.freePort();
        try (CapturedLog retries = CapturedLog.of(Retrier.class);
             CapturedLog queue = CapturedLog.of(PublishQueue.class);
             EventPublisher publisher = publisherOn(port, 100)) {
            List<CompletableFuture<Long>> futures = queueBehindAnAbsentServer(publisher, retries,
                    IntStream.range(0, 20).mapToObj(i -> EventPublishRequest.of("limited", Integer.toString(i)))
                            .toList());
            try (TestServer server = startWithLog(port, directory, "publish.max-batch-events", "5")) {
                for (CompletableFuture<Long> future : futures) {
                    future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                }
                assertEquals(IntStream.range(0, 20).mapToObj(Integer::toString).toList(),
                        loggedPayloads(server, "limited"), "every event in the log once, in order");
                assertTrue(queue.contains("publishAsync sends at most 9 events a request from now on"),
                        "the batch of 19 was refused, and the limit halved: " + queue.messages);
            }
        }
    }

    @Test
    void queuedEventsJoinedIntoABatchAreTheBytesOfTheBatchEncodedWhole() throws Exception {
        // An Idempotency-Key's fingerprint is taken of the body: publishBatch(events, key) after an unknown outcome
        // must send the very bytes the queue sent.
        List<EventPublishRequest> events = List.of(EventPublishRequest.of("a", "1"),
                new EventPublishRequest("b", "two \"quoted\" é", Map.of("k", "v"), null, null));
        List<byte[]> one = new ArrayList<>();
        for (EventPublishRequest event : events) {
            one.add(Transport.encode(NodePublisher.PUBLISH, event));
        }
        assertEquals(new String(Transport.encode(NodePublisher.BATCH, events), StandardCharsets.UTF_8),
                new String(NodePublisher.jsonArray(one), StandardCharsets.UTF_8));
    }

    @Test
    void aServerWithoutTheBatchEndpointTurnsBatchingOff() throws Exception {
        try (ServerWithoutBatches server = new ServerWithoutBatches();
             EventPublisher publisher = EventPublisher.builder(server.uri()).maxAsyncBatch(10).build()) {
            List<Long> ids = new ArrayList<>();
            for (int round = 0; round < 2; round++) {
                for (CompletableFuture<Long> future : queueBehindAHeldPublish(server, publisher, 5)) {
                    ids.add(future.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                }
            }
            assertEquals(LongStream.range(1, 11).boxed().toList(), ids, "every event published once, in order");
            assertEquals(1, server.batchRequests.get(), "one batch tried, and refused with 404");
            assertEquals(10, server.publishRequests.get(), "each event sent alone");
        }
    }

    private static EventPublisher publisherOn(int port, int maxAsyncBatch) {
        return EventPublisher.builder(URI.create("http://127.0.0.1:" + port)).maxAsyncBatch(maxAsyncBatch).build();
    }

    /**
     * Publishes the first event while nothing listens on the publisher's port, waits until its first attempt
     * failed (it is then retried, in flight), and queues the others behind it.
     */
    private static List<CompletableFuture<Long>> queueBehindAnAbsentServer(EventPublisher publisher,
            CapturedLog retries, List<EventPublishRequest> events) throws InterruptedException {
        List<CompletableFuture<Long>> futures = new ArrayList<>();
        futures.add(publisher.publishAsync(events.get(0)));
        Await.until("the first event's attempt refused", WAIT, () -> retries.contains("could not connect"));
        for (EventPublishRequest event : events.subList(1, events.size())) {
            futures.add(publisher.publishAsync(event));
        }
        return futures;
    }

    /** Queues {@code count} events while the server holds the answer to the first, then lets it answer. */
    private static List<CompletableFuture<Long>> queueBehindAHeldPublish(ServerWithoutBatches server,
            EventPublisher publisher, int count) throws InterruptedException {
        CountDownLatch gate = server.hold();
        int before = server.publishRequests.get();
        List<CompletableFuture<Long>> futures = new ArrayList<>();
        futures.add(publisher.publishAsync(EventPublishRequest.of("held", "0")));
        Await.until("the first publish at the server", WAIT, () -> server.publishRequests.get() > before);
        for (int i = 1; i < count; i++) {
            futures.add(publisher.publishAsync(EventPublishRequest.of("held", Integer.toString(i))));
        }
        gate.countDown();
        return futures;
    }

    /**
     * A stand-in for an Event Handler without {@code publish/batch} (Arrowhead 4.x's has none): it answers 404
     * there, and each publish with the next id, once the test lets it.
     */
    private static final class ServerWithoutBatches implements AutoCloseable {
        final AtomicInteger publishRequests = new AtomicInteger();
        final AtomicInteger batchRequests = new AtomicInteger();
        private final AtomicLong ids = new AtomicLong();
        private final HttpServer server;
        private final ExecutorService threads = Executors.newFixedThreadPool(2);
        private volatile CountDownLatch gate = new CountDownLatch(0);

        ServerWithoutBatches() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.setExecutor(threads);
            server.createContext("/eventhandler/publish", this::answer);
            server.start();
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
        }

        /** Holds the answers to publishes until the latch it returns is counted down. */
        CountDownLatch hold() {
            gate = new CountDownLatch(1);
            return gate;
        }

        private void answer(HttpExchange exchange) throws IOException {
            try (InputStream body = exchange.getRequestBody()) {
                body.readAllBytes();
            }
            if (exchange.getRequestURI().getPath().endsWith("/batch")) {
                batchRequests.incrementAndGet();
                JsonAnswer.send(exchange, 404, "{\"errorMessage\":\"no such endpoint\"}");
                return;
            }
            publishRequests.incrementAndGet();
            try {
                gate.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            JsonAnswer.send(exchange, 200, "{\"id\":" + ids.incrementAndGet() + "}");
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }
}

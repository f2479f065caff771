package eu.arrowhead.eventhandler.publisher;

import static eu.arrowhead.eventhandler.publisher.TestSupport.failedPublish;
import static eu.arrowhead.eventhandler.publisher.TestSupport.loggedPayloads;
import static eu.arrowhead.eventhandler.publisher.TestSupport.startWithLog;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TcpProxy;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an application sees while its server restarts: with the default retry policy, nothing but a wait; past a
 * deadline, one clear failure with its key; an unknown outcome that the key settles later.
 */
class ServerRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path directory;

    @Test
    void anApplicationOnTheDefaultsSeesNoFailureAndNoDuplicateThroughARestart() throws Exception {
        int port = TestServer.freePort();
        TestServer first = startWithLog(port, directory);
        AtomicInteger published = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Long> ids = new ArrayList<>();
        try (CapturedLog retries = CapturedLog.of(Retrier.class);
             EventPublisher publisher = EventPublisher.builder(URI.create("http://127.0.0.1:" + port)).build()) {
            Thread application = new Thread(() -> {
                try {
                    for (int i = 0; !stop.get(); i++) {
                        ids.add(publisher.publish(EventPublishRequest.of("restart", Integer.toString(i))));
                        published.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "application");
            application.start();
            Await.until("events published before the stop", WAIT, () -> published.get() >= 200 || failure.get() != null);
            first.close();
            Await.until("a publish refused while the server is down", WAIT,
                    () -> retries.contains("could not connect") || failure.get() != null);
            int beforeRestart = published.get();
            try (TestServer second = startWithLog(port, directory)) {
                Await.until("events published after the restart", WAIT,
                        () -> published.get() >= beforeRestart + 200 || failure.get() != null);
                stop.set(true);
                application.join(WAIT.toMillis());
                assertNull(failure.get(), () -> "the application saw a failure: " + failure.get());

                int count = published.get();
                assertEquals(IntStream.range(0, count).mapToObj(Integer::toString).toList(),
                        loggedPayloads(second, "restart"), "every event in the log once, in order");
                for (int i = 1; i < count; i++) {
                    assertTrue(ids.get(i) > ids.get(i - 1), "ids increase: " + ids.get(i - 1) + ", " + ids.get(i));
                }
            }
        } finally {
            stop.set(true);
            first.close();
        }
    }

    @Test
    void theDeadlinePassingWithTheServerDownIsOneClearFailureWithItsKey() throws Exception {
        URI nobody = URI.create("http://127.0.0.1:" + TestServer.freePort());
        RetryPolicy oneSecond = RetryPolicy.deadline(Duration.ofSeconds(1)).withBackoff(Duration.ofMillis(10),
                Duration.ofMillis(100));
        try (EventPublisher publisher = EventPublisher.builder(nobody).retryPolicy(oneSecond).build()) {
            TestSupport.Failure failure = failedPublish(publisher, EventPublishRequest.of("nowhere", "x"));
            PublishException e = failure.exception();
            assertEquals(PublishException.Kind.NOT_SENT, e.kind(), e.getMessage());
            assertEquals(0, e.statusCode());
            assertTrue(e.retryable());
            assertTrue(e.idempotencyKey().orElseThrow().length() > 1);
            assertTrue(e.getMessage().startsWith("publish to " + nobody + "/eventhandler/publish: could not connect"),
                    e.getMessage());
            assertTrue(e.getMessage().contains(" ms, with its deadline of 1000 ms too near for another)"),
                    e.getMessage());
            assertTrue(failure.took().compareTo(Duration.ofMillis(800)) >= 0, "retried until near the deadline: "
                    + failure.took());
            assertTrue(failure.took().compareTo(Duration.ofSeconds(5)) < 0, "gave up at the deadline: "
                    + failure.took());
        }
    }

    @Test
    void anAttemptWaitsForItsAnswerOnlyUntilTheDeadlineAndItsOutcomeIsReportedUnknown() throws Exception {
        try (SilentServer silent = new SilentServer();
             EventPublisher publisher = EventPublisher.builder(silent.uri())
                     .readTimeout(Duration.ofSeconds(30))
                     .retryPolicy(RetryPolicy.deadline(Duration.ofSeconds(1))).build()) {
            TestSupport.Failure failure = failedPublish(publisher, EventPublishRequest.of("silence", "x"));
            PublishException e = failure.exception();
            assertEquals(PublishException.Kind.OUTCOME_UNKNOWN, e.kind(), e.getMessage());
            assertTrue(e.idempotencyKey().isPresent());
            assertTrue(e.getMessage().contains(": no answer in time: "), e.getMessage());
            assertTrue(failure.took().compareTo(Duration.ofSeconds(5)) < 0,
                    "the 30 s read timeout was cut to the deadline: " + failure.took());
        }
    }

    @Test
    void queuedEventsWhoseDeadlinePassedBehindAHangingOneFailWithoutBeingSent() throws Exception {
        try (SilentServer silent = new SilentServer();
             EventPublisher publisher = EventPublisher.builder(silent.uri())
                     .retryPolicy(RetryPolicy.deadline(Duration.ofMillis(500))).build()) {
            List<CompletableFuture<Long>> futures = IntStream.range(0, 3)
                    .mapToObj(i -> publisher.publishAsync(EventPublishRequest.of("behind", Integer.toString(i))))
                    .toList();
            PublishException hanging = failure(futures.get(0));
            assertEquals(PublishException.Kind.OUTCOME_UNKNOWN, hanging.kind(), hanging.getMessage());
            assertTrue(hanging.idempotencyKey().isPresent());
            for (CompletableFuture<Long> behind : futures.subList(1, 3)) {
                PublishException e = failure(behind);
                assertEquals(PublishException.Kind.NOT_SENT, e.kind(), e.getMessage());
                assertTrue(e.getMessage().contains("waited in the queue until its deadline of 500 ms"), e.getMessage());
                assertTrue(e.idempotencyKey().isPresent());
            }
            assertEquals(1, silent.accepted(), "only the first event was sent");
        }
    }

    private static PublishException failure(CompletableFuture<Long> future) {
        return assertInstanceOf(PublishException.class,
                assertThrows(ExecutionException.class, () -> future.get(WAIT.toSeconds(), TimeUnit.SECONDS)).getCause());
    }

    @Test
    void aPublishWhoseAnswerWasLostIsAnsweredWithItsFirstIdWhenSentAgainWithItsKey() throws Exception {
        try (TestServer server = TestServer.start();
             SseStream stream = server.subscribe("?eventType=lost.answer");
             TcpProxy proxy = new TcpProxy("127.0.0.1", server.port());
             EventPublisher publisher = EventPublisher.builder(URI.create("http://127.0.0.1:" + proxy.port()))
                     .retryPolicy(RetryPolicy.NONE).build()) {
            EventPublishRequest event = EventPublishRequest.of("lost.answer", "x");
            proxy.loseNextAnswer();
            PublishException e = failedPublish(publisher, event).exception();
            assertEquals(PublishException.Kind.OUTCOME_UNKNOWN, e.kind(), e.getMessage());
            assertEquals(0, e.statusCode());
            long firstId = TestSupport.event(stream.events(1, WAIT).get(0)).id();

            long id = publisher.publish(event, e.idempotencyKey().orElseThrow());
            assertEquals(firstId, id, "the first attempt's id");
            long next = publisher.publish(EventPublishRequest.of("lost.answer", "y"));
            assertEquals(firstId + 1, next, "nothing was published in between");
            assertEquals(2, TestSupport.publishedTo(server, "lost.answer"));
        }
    }

    @Test
    void asyncPublishesKeepTheirOrderAcrossARestart() throws Exception {
        int port = TestServer.freePort();
        TestServer first = startWithLog(port, directory);
        List<CompletableFuture<Long>> futures = new ArrayList<>();
        try (CapturedLog retries = CapturedLog.of(Retrier.class);
             EventPublisher publisher = EventPublisher.builder(URI.create("http://127.0.0.1:" + port)).build()) {
            for (int i = 0; i < 100; i++) {
                futures.add(publisher.publishAsync(EventPublishRequest.of("async.restart", Integer.toString(i))));
            }
            Await.until("some published before the stop", WAIT, () -> futures.get(10).isDone());
            first.close();
            for (int i = 100; i < 200; i++) {
                futures.add(publisher.publishAsync(EventPublishRequest.of("async.restart", Integer.toString(i))));
            }
            Await.until("a publish refused while the server is down", WAIT, () -> retries.contains("could not connect"));
            try (TestServer second = startWithLog(port, directory)) {
                long last = 0;
                for (CompletableFuture<Long> future : futures) {
                    long id = future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                    assertTrue(id > last, "ids increase in call order: " + last + ", " + id);
                    last = id;
                }
                assertEquals(IntStream.range(0, 200).mapToObj(Integer::toString).toList(),
                        loggedPayloads(second, "async.restart"), "every event in the log once, in call order");
            }
        } finally {
            first.close();
        }
    }

    @Test
    void aFullAsyncQueueRefusesTheNewEventAtOnceAndTakesEventsAgainOnceItDrains() throws Exception {
        int port = TestServer.freePort();
        long bound = 1000;
        try (EventPublisher publisher = EventPublisher.builder(URI.create("http://127.0.0.1:" + port))
                .maxQueuedBytes(bound).build()) {
            int size = Transport.encode("publish", event(0)).length;
            List<CompletableFuture<Long>> queued = new ArrayList<>();
            for (int i = 0; i < bound / size; i++) {
                queued.add(publisher.publishAsync(event(i)));
            }
            CompletableFuture<Long> refused = publisher.publishAsync(event(9999));
            assertTrue(refused.isCompletedExceptionally(), "refused at once, the caller's thread not held");
            PublishException e = assertInstanceOf(PublishException.class,
                    assertThrows(CompletionException.class, refused::join).getCause());
            assertEquals(PublishException.Kind.QUEUE_FULL, e.kind());
            assertTrue(e.getMessage().contains("would pass maxQueuedBytes (1000)"), e.getMessage());
            assertFalse(queued.get(queued.size() - 1).isDone(), "the queued events wait for the server");

            try (TestServer server = TestServer.start("server.port", Integer.toString(port))) {
                long last = 0;
                for (CompletableFuture<Long> future : queued) {
                    long id = future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                    assertTrue(id > last);
                    last = id;
                }
                assertTrue(publisher.publishAsync(event(10_000)).get(WAIT.toSeconds(), TimeUnit.SECONDS) > last,
                        "the drained queue takes events again");
                assertEquals(queued.size() + 1, TestSupport.publishedTo(server, "bounded"));
            }
        }
    }

    /** Events of one size: the payload is five digits. */
    private static EventPublishRequest event(int i) {
        return EventPublishRequest.of("bounded", String.format("%05d", i));
    }
}

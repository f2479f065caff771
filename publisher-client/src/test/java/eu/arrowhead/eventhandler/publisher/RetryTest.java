package eu.arrowhead.eventhandler.publisher;

import static eu.arrowhead.eventhandler.publisher.TestSupport.baseUri;
import static eu.arrowhead.eventhandler.publisher.TestSupport.failedPublish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TcpProxy;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What is retried, how long the publisher waits, and what it reports when it gives up. */
class RetryTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void unavailableIsRetriedAfterTheServersRetryAfter() throws Exception {
        try (TestServer server = TestServer.start("topic.max-count", "1");
             // A subscribed topic does not give way to a new one: "two" is refused while this stream is open.
             SseStream holdsTheOnlyTopic = server.subscribe("?eventType=one");
             EventPublisher retrying = EventPublisher.builder(baseUri(server))
                     .retryPolicy(RetryPolicy.of(2, Duration.ofMillis(10), Duration.ofSeconds(5))).build();
             EventPublisher once = EventPublisher.builder(baseUri(server)).retryPolicy(RetryPolicy.NONE).build()) {
            retrying.publish(EventPublishRequest.of("one", "takes the only topic"));
            once.publish(EventPublishRequest.of("one", "opens the connection"));

            TestSupport.Failure retried = failedPublish(retrying, EventPublishRequest.of("two", "no room"));
            PublishException e = retried.exception();
            Duration took = retried.took();
            assertEquals(503, e.statusCode());
            assertTrue(e.retryable());
            assertEquals("UNAVAILABLE", e.errorMessage().orElseThrow().exceptionType());
            assertTrue(e.getMessage().startsWith("publish refused with 503: "), e.getMessage());
            assertTrue(e.getMessage().endsWith(" (gave up after 2 attempts)"), e.getMessage());
            assertTrue(took.compareTo(Duration.ofMillis(990)) >= 0, "Retry-After: 1 was honoured: " + took);
            assertTrue(took.compareTo(Duration.ofSeconds(4)) < 0, "waited Retry-After, not maxBackoff: " + took);

            TestSupport.Failure unretried = failedPublish(once, EventPublishRequest.of("two", "no room"));
            took = unretried.took();
            assertEquals(503, unretried.exception().statusCode());
            assertTrue(took.compareTo(Duration.ofMillis(900)) < 0,
                    "HttpClient's own retry, which would wait Retry-After, is off: " + took);
        }
    }

    @Test
    void refusedConnectionIsRetriedThenReportedWithNoStatus() throws Exception {
        URI nobody = URI.create("http://127.0.0.1:" + TestServer.freePort());
        try (EventPublisher publisher = EventPublisher.builder(nobody)
                .retryPolicy(RetryPolicy.of(3, Duration.ofMillis(50), Duration.ofMillis(50))).build()) {
            TestSupport.Failure failure = failedPublish(publisher, EventPublishRequest.of("nowhere", "x"));
            PublishException e = failure.exception();
            Duration took = failure.took();
            assertEquals(0, e.statusCode());
            assertTrue(e.retryable());
            assertTrue(e.errorMessage().isEmpty());
            assertTrue(e.getMessage().startsWith("publish to " + nobody + "/eventhandler/publish: could not connect"),
                    e.getMessage());
            assertTrue(e.getMessage().endsWith(" (gave up after 3 attempts)"), e.getMessage());
            assertTrue(took.compareTo(Duration.ofMillis(100)) >= 0, "two waits of 50 ms: " + took);
            assertTrue(took.compareTo(WAIT) < 0, "bounded: " + took);
        }
    }

    @Test
    void publishGoesThroughOnceTheServerAppears() throws Exception {
        int port = TestServer.freePort();
        CapturedLog log = CapturedLog.of(Retrier.class);
        try (EventPublisher publisher = EventPublisher.builder(URI.create("http://127.0.0.1:" + port))
                .retryPolicy(RetryPolicy.of(300, Duration.ofMillis(100), Duration.ofMillis(100))).build()) {
            CompletableFuture<Long> id = publisher.publishAsync(EventPublishRequest.of("late", "x"));
            Await.until("a first attempt has been refused", WAIT,
                    () -> log.contains("could not connect"));
            assertTrue(!id.isDone(), "the publish waits to try again");
            try (TestServer server = TestServer.start("server.port", Integer.toString(port))) {
                assertTrue(id.get(WAIT.toSeconds(), TimeUnit.SECONDS) >= 1);
                assertEquals(1, TestSupport.publishedTo(server, "late"), "published once");
            }
        } finally {
            log.close();
        }
    }

    @Test
    void lostAnswerIsRetriedOnANewConnection() throws Exception {
        try (SilentServer silent = new SilentServer();
             EventPublisher publisher = EventPublisher.builder(silent.uri())
                     .readTimeout(Duration.ofMillis(300))
                     .retryPolicy(RetryPolicy.of(2, Duration.ofMillis(10), Duration.ofMillis(10))).build()) {
            PublishException e = failedPublish(publisher, EventPublishRequest.of("lost", "x")).exception();
            assertEquals(0, e.statusCode());
            assertTrue(e.retryable());
            assertTrue(e.getMessage().contains(": no answer in time: "), e.getMessage());
            Await.until("both attempts have connected", WAIT, () -> silent.accepted() >= 2);
            assertEquals(2, silent.accepted(), "the request was sent again, on a new connection");
        }
    }

    @Test
    void aRetryAfterALostAnswerGetsTheFirstIdAndPublishesNothingTwice() throws Exception {
        try (TestServer server = TestServer.start();
             TcpProxy proxy = new TcpProxy("127.0.0.1", server.port());
             EventPublisher publisher = EventPublisher.builder(URI.create("http://127.0.0.1:" + proxy.port()))
                     .retryPolicy(RetryPolicy.of(3, Duration.ofMillis(10), Duration.ofMillis(10))).build()) {
            proxy.loseNextAnswer();
            long id = publisher.publish(EventPublishRequest.of("exactly.once", "x"));
            List<Long> batch = publisher.publishBatch(List.of(EventPublishRequest.of("exactly.once", "y")));

            assertEquals(2, proxy.accepted(), "the first answer was lost and the publish sent again");
            assertEquals(2, TestSupport.publishedTo(server, "exactly.once"), "an event was published twice");
            assertEquals(id + 1, batch.get(0));
        }
    }
}

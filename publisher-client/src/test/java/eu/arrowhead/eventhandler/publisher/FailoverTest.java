package eu.arrowhead.eventhandler.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.testing.JsonAnswer;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A publisher given several nodes moves to the next when one fails, and stays there. */
class FailoverTest {
    private static final RetryPolicy QUICK = RetryPolicy.of(3, Duration.ofMillis(10), Duration.ofMillis(50));
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aNodeThatDoesNotListenIsLeftForTheNextAndStaysLeft() throws Exception {
        URI nobody = URI.create("http://127.0.0.1:" + TestServer.freePort());
        try (EventPublisher publisher = EventPublisher.builder(List.of(nobody, TestSupport.baseUri(server)))
                .retryPolicy(QUICK).build()) {
            long before = TestSupport.connectionsAccepted(server);
            publisher.publish(EventPublishRequest.of("failover.refused", "first"));
            publisher.publish(EventPublishRequest.of("failover.refused", "second"));
            assertEquals(2, TestSupport.publishedTo(server, "failover.refused"));
            assertEquals(1, TestSupport.connectionsAccepted(server) - before,
                    "the second publish went to the live node on its kept-alive connection");
        }
    }

    @Test
    void aNodeAnswering503IsLeftForTheNext() throws Exception {
        AtomicInteger refused = new AtomicInteger();
        HttpServer busy = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        busy.createContext("/", exchange -> {
            refused.incrementAndGet();
            exchange.getRequestBody().readAllBytes();
            JsonAnswer.send(exchange, 503, "{\"errorMessage\":\"busy\",\"errorCode\":503,"
                    + "\"exceptionType\":\"UNAVAILABLE\"}");
        });
        busy.start();
        try (EventPublisher publisher = EventPublisher.builder(List.of(
                URI.create("http://127.0.0.1:" + busy.getAddress().getPort()), TestSupport.baseUri(server)))
                .retryPolicy(QUICK).build()) {
            publisher.publishBatch(List.of(EventPublishRequest.of("failover.busy", "a"),
                    EventPublishRequest.of("failover.busy", "b")));
            assertEquals(1, refused.get());
            assertEquals(2, TestSupport.publishedTo(server, "failover.busy"));
        } finally {
            busy.stop(0);
        }
    }

    @Test
    void everyNodeDownFailsAfterThePolicysAttempts() {
        URI one = URI.create("http://127.0.0.1:" + TestServer.freePort());
        URI two = URI.create("http://127.0.0.1:" + TestServer.freePort());
        try (EventPublisher publisher = EventPublisher.builder(List.of(one, two)).retryPolicy(QUICK).build()) {
            PublishException e = assertThrows(PublishException.class,
                    () -> publisher.publish(EventPublishRequest.of("failover.none", "x")));
            assertEquals(0, e.statusCode());
            assertTrue(e.getMessage().contains("3"), e.getMessage());
        }
    }

    @Test
    void theNodeListIsChecked() {
        URI node = URI.create("http://127.0.0.1:8455");
        assertThrows(IllegalArgumentException.class, () -> EventPublisher.builder(List.of()));
        assertThrows(IllegalArgumentException.class, () -> EventPublisher.builder(List.of(node, node)));
        assertThrows(IllegalArgumentException.class,
                () -> EventPublisher.builder(List.of(node, URI.create("ftp://127.0.0.1:21"))));
        assertThrows(IllegalArgumentException.class, () -> EventPublisher.builder((List<URI>) null));
    }
}

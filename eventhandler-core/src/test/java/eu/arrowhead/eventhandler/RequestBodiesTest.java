package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.HeapBudget;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Request bodies that arrive slowly, never, or too large: none holds a worker, each gets its answer (408,
 * 413), and the others are served meanwhile. (The memory budget, with a small heap: {@code RequestBodiesIT}.)
 */
class RequestBodiesTest {
    private static final String EVENT = "{\"eventType\":\"slow\",\"payload\":\"" + "x".repeat(150) + "\"}";

    private static String publishHead(String path, long contentLength) {
        return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + contentLength + "\r\n\r\n";
    }

    /**
     * A body that arrives after its headers (as many clients send it, the JDK's HttpClient among them) is
     * gathered while the connection's reading is paused: once the publish is answered, the next request on the
     * same kept-alive connection must be read too, for a publish that runs on the selector and one (20 KB)
     * that runs on a worker. The request asks for a 100 Continue, which the server sends once it has parsed the
     * headers and before its handler looks for the body: the body, sent only then, cannot be read with them.
     */
    @Test
    void aKeptAliveConnectionIsReadOnAfterABodyThatArrivedAfterItsHeaders() throws Exception {
        try (TestServer server = TestServer.start()) {
            for (int payload : new int[] {10, 20_000}) {
                String event = "{\"eventType\":\"late\",\"payload\":\"" + "x".repeat(payload) + "\"}";
                try (RawHttp http = RawHttp.connect(server.port())) {
                    http.send("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Expect: 100-continue\r\nContent-Length: " + event.length() + "\r\n\r\n");
                    RawHttp.Answer proceed = http.answer(Duration.ofSeconds(10));
                    assertEquals(100, proceed.status(), "the server asks for the body: " + proceed.body());
                    http.send(event);
                    RawHttp.Answer published = http.answer(Duration.ofSeconds(10));
                    assertEquals(200, published.status(), published.body());
                    http.send("GET /eventhandler/echo HTTP/1.1\r\nHost: x\r\n\r\n");
                    RawHttp.Answer echo = http.answer(Duration.ofSeconds(10));
                    assertEquals(200, echo.status(), "the request after a " + payload + "-byte publish: " + echo.body());
                }
            }
        }
    }

    /**
     * More clients trickling their bodies than there are workers: echo, health and a publish that runs on a
     * worker (20 KB) are answered at once while they still send, and each trickler is served when it is done.
     */
    @Test
    void tricklingBodiesHoldNoWorker() throws Exception {
        List<RawHttp> tricklers = new ArrayList<>();
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (TestServer server = TestServer.start("server.worker-threads", "2", "server.body-timeout-seconds", "120")) {
            for (int i = 0; i < 20; i++) {
                tricklers.add(RawHttp.connect(server.port()).send(publishHead("/eventhandler/publish", EVENT.length())
                        + EVENT.substring(0, 20)));
            }
            // One more byte of each body every 200 ms: 130 bytes to go take them half a minute.
            int[] sent = {20};
            trickle.scheduleAtFixedRate(() -> {
                if (sent[0] < EVENT.length() - 1) {
                    for (RawHttp trickler : tricklers) {
                        trickler.trySend(EVENT.substring(sent[0], sent[0] + 1));
                    }
                    sent[0]++;
                }
            }, 200, 200, TimeUnit.MILLISECONDS);

            long start = System.nanoTime();
            assertEquals(200, server.get("/eventhandler/echo").statusCode());
            assertEquals(200, server.get("/eventhandler/mgmt/health").statusCode());
            Reply publish = server.post("/eventhandler/publish", "{\"eventType\":\"fast\",\"payload\":\""
                    + "y".repeat(20_000) + "\"}");
            assertEquals(200, publish.statusCode(), publish.body());
            long elapsed = System.nanoTime() - start;
            assertTrue(elapsed < Duration.ofSeconds(10).toNanos(), "served in " + elapsed / 1_000_000 + " ms");

            trickle.shutdown();
            assertTrue(trickle.awaitTermination(10, TimeUnit.SECONDS));
            assertTrue(sent[0] < EVENT.length() - 1, "the tricklers were still sending");
            for (RawHttp trickler : tricklers) {
                assertFalse(trickler.answered(), "no trickler is answered before its body is whole");
                trickler.send(EVENT.substring(sent[0]));
                RawHttp.Answer answer = trickler.answer(Duration.ofSeconds(10));
                assertEquals(200, answer.status(), answer.body());
            }
            assertEquals(20, server.topic("slow").orElseThrow().published());
        } finally {
            trickle.shutdownNow();
            tricklers.forEach(RawHttp::close);
        }
    }

    @Test
    void aBodyThatDoesNotArriveInTimeGets408AndItsConnectionIsClosed() throws Exception {
        try (TestServer server = TestServer.start("server.body-timeout-seconds", "1");
             RawHttp http = RawHttp.connect(server.port())) {
            http.send(publishHead("/eventhandler/publish", EVENT.length()) + EVENT.substring(0, 10));
            RawHttp.Answer answer = http.answer(Duration.ofSeconds(20));
            assertEquals(408, answer.status(), answer.body());
            assertTrue(answer.body().contains("server.body-timeout-seconds"), answer.body());
            assertTrue(http.closedWithin(Duration.ofSeconds(10)), "the connection is closed");
            assertEquals(200, server.get("/eventhandler/echo").statusCode());
        }
    }

    /** Refused on its headers: the server reads none of it. */
    @Test
    void aDeclaredLengthOverTheLimitIs413AtOnce() throws Exception {
        try (TestServer server = TestServer.start("publish.max-request-bytes", "1000", "publish.max-payload-bytes", "1000",
                "server.body-timeout-seconds", "120");
             RawHttp http = RawHttp.connect(server.port())) {
            http.send(publishHead("/eventhandler/publish", 999_999_999L) + "{");
            RawHttp.Answer answer = http.answer(Duration.ofSeconds(10));
            assertEquals(413, answer.status(), answer.body());
            assertTrue(answer.body().contains("larger than 1000 bytes (publish.max-request-bytes)"), answer.body());
            assertTrue(http.closedWithin(Duration.ofSeconds(10)), "the connection is closed");
        }
    }

    @Test
    void aChunkedBodyIsCutAsSoonAsItPassesTheLimitAndOneWithinItIsServed() throws Exception {
        try (TestServer server = TestServer.start("publish.max-request-bytes", "1000", "publish.max-payload-bytes", "1000",
                "server.body-timeout-seconds", "120")) {
            try (RawHttp http = RawHttp.connect(server.port())) {
                http.send("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n5dc\r\n" + " ".repeat(1500) + "\r\n");
                RawHttp.Answer answer = http.answer(Duration.ofSeconds(10));
                assertEquals(413, answer.status(), answer.body());
                assertTrue(http.closedWithin(Duration.ofSeconds(10)), "the connection is closed");
            }
            try (RawHttp http = RawHttp.connect(server.port())) {
                http.send("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n" + chunk(EVENT.substring(0, 50)));
                http.send(chunk(EVENT.substring(50)) + "0\r\n\r\n");
                RawHttp.Answer answer = http.answer(Duration.ofSeconds(10));
                assertEquals(200, answer.status(), answer.body());
            }
        }
    }

    /** A Jersey endpoint gets its body whole too, however it arrived. */
    @Test
    void aSubscriptionSentInPartsIsServed() throws Exception {
        String subscription = "{\"eventType\":\"parts\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\","
                + "\"port\":1},\"notifyUri\":\"n\"}";
        try (TestServer server = TestServer.start("server.worker-threads", "1");
             RawHttp http = RawHttp.connect(server.port())) {
            http.send(publishHead("/eventhandler/subscribe", subscription.length()) + subscription.substring(0, 30));
            assertEquals(200, server.get("/eventhandler/echo").statusCode(), "the one worker is free meanwhile");
            http.send(subscription.substring(30));
            RawHttp.Answer answer = http.answer(Duration.ofSeconds(10));
            assertEquals(200, answer.status(), answer.body());
            assertTrue(server.get("/eventhandler/mgmt/subscriptions").body().contains("\"parts\""));
        }
    }

    /** A limit that a single body could not be held within is a setting that cannot take effect. */
    @Test
    void aBodyLimitTheHeapCannotHoldStopsTheStart() {
        long tooLarge = HeapBudget.ofThisJvm().requestBodies() + 1;
        assumeTrue(tooLarge <= 256 << 20, "the test JVM's heap is large enough to hold any body limit");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.withOverrides(
                Map.of("server.max-body-bytes", Long.toString(tooLarge))));
        assertTrue(e.getMessage().contains("'server.max-body-bytes'") && e.getMessage().contains("heap"),
                e.getMessage());
    }

    private static String chunk(String data) {
        return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
    }
}

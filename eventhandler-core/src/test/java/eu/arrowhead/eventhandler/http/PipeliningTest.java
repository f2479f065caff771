package eu.arrowhead.eventhandler.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Requests written in one go on one connection (HTTP/1.1 pipelining) are all answered, in order. Grizzly's
 * default memory manager let the next response overwrite requests not yet parsed once a burst passed one read
 * buffer (64 KiB): see {@link GrizzlyTuning}.
 */
class PipeliningTest {
    private static final int REQUESTS = 3_000;
    private static final String HELD = "eventhandler_connections_held_for_unread_answers";
    /** A scrape costs the server far more than a publish: not so often that it slows the burst it waits for. */
    private static final Duration SCRAPE_EVERY = Duration.ofMillis(100);

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
    void aBurstOfPublishesOnOneConnectionIsAnsweredInOrderAndPublished() throws Exception {
        try (RawHttp http = RawHttp.connect(server.port())) {
            byte[] burst = burst("pipelined", REQUESTS);
            assertTrue(burst.length > 4 * 65_536, burst.length + " bytes: several read buffers");
            // Written while the answers are read: a client that wrote everything before reading would fill
            // both sockets' buffers and stall (the server stops reading a client that does not read).
            CompletableFuture<Void> written = CompletableFuture.runAsync(() -> http.send(burst));
            assertAnsweredInOrder(http, REQUESTS);
            written.get();
            assertEquals(REQUESTS, server.topic("pipelined").orElseThrow().published());
            awaitNoneHeld();
        }
    }

    /**
     * A client that pipelines without reading its answers is not read on once its unread answers pass
     * {@link UnreadAnswers#MAX_QUEUED_BYTES}: the server does not queue answers without end. Once it reads,
     * every request is answered in order and published.
     */
    @Test
    void aClientThatDoesNotReadItsAnswersIsNotReadOnUntilItDoes() throws Exception {
        // Answers of some 6.6 MB: more than the sockets' buffers take (on Linux's loopback the server's send
        // buffer grows to 4 MiB; the server stopped at about 47 000 of them).
        int requests = 60_000;
        byte[] burst = burst("unread", requests);
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(16 * 1024);
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()));
            CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
                try {
                    socket.getOutputStream().write(burst);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            long stalledAt = publishedOnceHeld("unread");
            assertTrue(stalledAt < requests, "the server stopped reading at " + stalledAt + " of " + requests);
            RawHttp reader = RawHttp.over(socket);
            assertAnsweredInOrder(reader, requests);
            written.get(20, TimeUnit.SECONDS);
            assertEquals(requests, server.topic("unread").orElseThrow().published());
            awaitNoneHeld();
        }
    }

    /** Bodies of differing lengths, so that the read buffers' boundaries cut requests everywhere. */
    private static byte[] burst(String eventType, int requests) throws IOException {
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        for (int i = 0; i < requests; i++) {
            String body = "{\"eventType\":\"" + eventType + "\",\"payload\":\"" + "x".repeat(i % 97) + "\"}";
            burst.write(("POST /eventhandler/publish HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
        }
        return burst.toByteArray();
    }

    /**
     * The published count once the server holds the connection: it parses none of its requests while the client
     * has not read its answers, so the count stands still there.
     */
    private static long publishedOnceHeld(String eventType) throws InterruptedException {
        Await.until("the connection held for its unread answers", Duration.ofMinutes(3), SCRAPE_EVERY,
                () -> server.metric(HELD) == 1);
        return server.topic(eventType).orElseThrow().published();
    }

    /** Every held request ends once its client has read: none is left counted. */
    private static void awaitNoneHeld() throws InterruptedException {
        Await.until("no connection held for unread answers", Duration.ofSeconds(20), SCRAPE_EVERY,
                () -> server.metric(HELD) == 0);
    }

    private static void assertAnsweredInOrder(RawHttp http, int requests) {
        long previousId = 0;
        for (int i = 0; i < requests; i++) {
            RawHttp.Answer answer = http.answer(Duration.ofSeconds(20));
            assertEquals(200, answer.status(), "answer " + i + ": " + answer.body());
            long id = Long.parseLong(answer.body().replaceAll("\\D", ""));
            assertTrue(id > previousId, "answer " + i + " has id " + id + " after " + previousId);
            previousId = id;
        }
    }
}

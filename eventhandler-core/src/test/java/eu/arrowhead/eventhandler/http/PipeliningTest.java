package eu.arrowhead.eventhandler.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Requests written in one go on one connection (HTTP/1.1 pipelining) are all answered, in order. Grizzly's
 * default memory manager let the next response overwrite requests not yet parsed once a burst passed one read
 * buffer (64 KiB): see {@link GrizzlyTuning}.
 */
class PipeliningTest {
    private static final int REQUESTS = 3_000;

    @Test
    void aBurstOfPublishesOnOneConnectionIsAnsweredInOrderAndPublished() throws Exception {
        try (TestServer server = TestServer.start(); RawHttp http = RawHttp.connect(server.port())) {
            // Bodies of differing lengths, so that the read buffers' boundaries cut requests everywhere.
            ByteArrayOutputStream burst = new ByteArrayOutputStream();
            for (int i = 0; i < REQUESTS; i++) {
                String body = "{\"eventType\":\"pipelined\",\"payload\":\"" + "x".repeat(i % 97) + "\",\"metaData\":{\"n\":\"" + i + "\"}}";
                burst.write(("POST /eventhandler/publish HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            }
            assertTrue(burst.size() > 4 * 65_536, burst.size() + " bytes: several read buffers");
            // Written while the answers are read: a client that wrote everything before reading would fill
            // both sockets' buffers and stall (the server stops reading a client that does not read).
            CompletableFuture<Void> written = CompletableFuture.runAsync(() -> http.send(burst.toByteArray()));
            long previousId = 0;
            for (int i = 0; i < REQUESTS; i++) {
                RawHttp.Answer answer = http.answer(Duration.ofSeconds(20));
                assertEquals(200, answer.status(), "answer " + i + ": " + answer.body());
                long id = Long.parseLong(answer.body().replaceAll("\\D", ""));
                assertTrue(id > previousId, "answer " + i + " has id " + id + " after " + previousId);
                previousId = id;
            }
            written.get();
            assertEquals(REQUESTS, server.topic("pipelined").orElseThrow().published());
        }
    }
}

package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.LoggedLines;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import eu.arrowhead.eventhandler.testing.Reply;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/** Every kind of bad input gets a 4xx with an ErrorMessage that says what is wrong; the server goes on. */
class BadInputTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start("publish.max-payload-bytes", "100", "publish.max-request-bytes", "2000",
                "publish.max-batch-events", "3", "server.max-header-bytes", "2048",
                "server.idle-timeout-seconds", "2");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @AfterEach
    void serverStillServes() {
        assertEquals(200, server.get("/eventhandler/echo").statusCode());
        assertTrue(server.publish("still.serving", "ok") > 0);
    }

    static Stream<Arguments> badPublishBodies() {
        String longType = "t".repeat(256);
        return Stream.of(
                Arguments.of("malformed JSON", "{\"eventType\":", 400, "malformed JSON"),
                Arguments.of("not an object", "[1,2]", 400, "must be a JSON object"),
                Arguments.of("JSON null", "null", 400, "not null"),
                Arguments.of("trailing content", "{\"eventType\":\"a\",\"payload\":\"b\"} {}", 400, "after the JSON value"),
                Arguments.of("eventType a number", "{\"eventType\":5,\"payload\":\"x\"}", 400, "'eventType' must be a string"),
                Arguments.of("payload an object", "{\"eventType\":\"a\",\"payload\":{\"t\":1}}", 400, "'payload' must be a string"),
                Arguments.of("metaData a string", "{\"eventType\":\"a\",\"payload\":\"x\",\"metaData\":\"u\"}", 400, "'metaData' must be"),
                Arguments.of("metaData value a number", "{\"eventType\":\"a\",\"payload\":\"x\",\"metaData\":{\"u\":1}}", 400, "'metaData.u' must be a string"),
                Arguments.of("metaData value null", "{\"eventType\":\"a\",\"payload\":\"x\",\"metaData\":{\"u\":null}}", 400, "must be a string, not null"),
                Arguments.of("port a string", "{\"eventType\":\"a\",\"payload\":\"x\",\"source\":{\"systemName\":\"s\",\"port\":\"80\"}}", 400, "'source.port' must be a whole number"),
                Arguments.of("port out of range", "{\"eventType\":\"a\",\"payload\":\"x\",\"source\":{\"systemName\":\"s\",\"port\":70000}}", 400, "from 0 to 65535"),
                Arguments.of("source without a name", "{\"eventType\":\"a\",\"payload\":\"x\",\"source\":{}}", 400, "source.systemName is required"),
                Arguments.of("unknown field", "{\"eventType\":\"a\",\"payload\":\"x\",\"metadata\":{}}", 400, "unknown field 'metadata'"),
                Arguments.of("missing eventType", "{\"payload\":\"x\"}", 400, "eventType is required"),
                Arguments.of("empty eventType", "{\"eventType\":\"\",\"payload\":\"x\"}", 400, "eventType is required"),
                Arguments.of("newline in eventType", "{\"eventType\":\"a\\nid: 999\",\"payload\":\"x\"}", 400, "line feed"),
                Arguments.of("space in eventType", "{\"eventType\":\"a b\",\"payload\":\"x\"}", 400, "U+0020"),
                Arguments.of("non-ASCII eventType", "{\"eventType\":\"temp\u00e9rature\",\"payload\":\"x\"}", 400, "only letters, digits"),
                Arguments.of("eventType too long", "{\"eventType\":\"" + longType + "\",\"payload\":\"x\"}", 400, "the limit is 255"),
                Arguments.of("reserved eventType", "{\"eventType\":\"EventHandler.replay-gap\",\"payload\":\"x\"}", 400, "reserved"),
                Arguments.of("missing payload", "{\"eventType\":\"a\"}", 400, "payload is required"),
                Arguments.of("payload too large", "{\"eventType\":\"a\",\"payload\":\"" + "x".repeat(101) + "\"}", 413, "publish.max-payload-bytes"),
                Arguments.of("payload too large in UTF-8", "{\"eventType\":\"a\",\"payload\":\"" + "\u00e9".repeat(51) + "\"}", 413, "102 bytes"),
                Arguments.of("timeStamp not ISO", "{\"eventType\":\"a\",\"payload\":\"x\",\"timeStamp\":\"2026-11-21 10:00:00\"}", 400, "not an ISO-8601 instant"),
                Arguments.of("timeStamp too old", "{\"eventType\":\"a\",\"payload\":\"x\",\"timeStamp\":\"2020-01-01T00:00:00Z\"}", 400, "publish.timestamp-tolerance-seconds"),
                Arguments.of("timeStamp in the future", "{\"eventType\":\"a\",\"payload\":\"x\",\"timeStamp\":\""
                        + Instant.now().plusSeconds(3600) + "\"}", 400, "away from the server's clock"),
                Arguments.of("body too large", "{\"eventType\":\"a\",\"payload\":\"" + "x".repeat(2000) + "\"}", 413, "publish.max-request-bytes"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badPublishBodies")
    void badPublishBodyIsRefused(String what, String body, int status, String message) throws Exception {
        assertError(server.post("/eventhandler/publish", body), status, message, "/eventhandler/publish");
    }

    @Test
    void emptyBodyIsRefused() throws Exception {
        assertError(server.post("/eventhandler/publish", ""), 400, "body is empty", "/eventhandler/publish");
    }

    @Test
    void wrongContentTypeIsUnsupportedMediaType() throws Exception {
        Reply response = server.post("/eventhandler/publish", "{\"eventType\":\"a\",\"payload\":\"x\"}", "text/plain");
        assertError(response, 415, "Content-Type: application/json", "/eventhandler/publish");
    }

    @Test
    void missingContentTypeIsTakenAsJson() throws Exception {
        Reply response = server.post("/eventhandler/publish", "{\"eventType\":\"a\",\"payload\":\"x\"}", null);
        assertEquals(200, response.statusCode(), response.body());
    }

    @Test
    void badBatchesAreRefusedWhole() throws Exception {
        assertError(server.post("/eventhandler/publish/batch", "[]"), 400, "1 or more events", "/eventhandler/publish/batch");
        assertError(server.post("/eventhandler/publish/batch", "{\"eventType\":\"a\",\"payload\":\"x\"}"), 400,
                "must be a JSON array", "/eventhandler/publish/batch");
        String four = "[" + "{\"eventType\":\"a\",\"payload\":\"x\"},".repeat(3) + "{\"eventType\":\"a\",\"payload\":\"x\"}]";
        assertError(server.post("/eventhandler/publish/batch", four), 400, "publish.max-batch-events", "/eventhandler/publish/batch");

        long before = server.publish("batch.atomic", "marker");
        assertError(server.post("/eventhandler/publish/batch",
                "[{\"eventType\":\"batch.atomic\",\"payload\":\"1\"},{\"eventType\":\"bad type\",\"payload\":\"2\"}]"),
                400, "event 1: eventType", "/eventhandler/publish/batch");
        long after = server.publish("batch.atomic", "marker");
        assertEquals(before + 1, after, "the refused batch took no ids: all or nothing");
    }

    @Test
    void badSubscriptionsAreRefusedBeforeTheStreamOpens() throws Exception {
        assertError(server.get("/eventhandler/events"), 400, "at least one eventType", "/eventhandler/events");
        assertError(server.get("/eventhandler/events?eventType=a%0Ab"), 400, "line feed", "/eventhandler/events");
        assertError(server.get("/eventhandler/events?eventType=a&lastEventId=x"), 400, "Last-Event-ID", "/eventhandler/events");
        assertError(server.get("/eventhandler/events?eventType=a&lastEventId=-1"), 400, "Last-Event-ID", "/eventhandler/events");
        assertError(server.get("/eventhandler/events?eventType=a&evenType=b"), 400, "unknown query parameter 'evenType'", "/eventhandler/events");
        assertError(server.get("/eventhandler/events?eventType=a&meta.=x"), 400, "needs a key", "/eventhandler/events");
        assertError(server.get("/eventhandler/events?eventType=a&source="), 400, "source may not be empty", "/eventhandler/events");
        Reply post = server.post("/eventhandler/events?eventType=a", "{}");
        assertError(post, 405, "use GET", "/eventhandler/events");
        assertEquals("GET", post.header("Allow"));
    }

    @Test
    void unknownPathIsNotFound() throws Exception {
        assertError(server.get("/eventhandler/nothing-here"), 404, "no endpoint at /eventhandler/nothing-here", "/eventhandler/nothing-here");
    }

    @Test
    void wrongMethodIsNotAllowed() throws Exception {
        assertError(server.get("/eventhandler/publish"), 405, "does not take that method", "/eventhandler/publish");
    }

    @Test
    void oversizedHeadersGetAJsonError() throws Exception {
        Reply response = server.get("/eventhandler/echo", "X-Padding", "p".repeat(4000));
        assertTrue(response.statusCode() >= 400 && response.statusCode() < 500, "status " + response.statusCode());
    }

    @Test
    /** An incomplete request (a header line without a colon) is cut off by the idle timeout at the latest. */
    void garbageOnTheSocketIsAnsweredOrClosedNeverLeftHanging() throws Exception {
        for (String garbage : new String[] {"THIS IS NOT HTTP\r\n\r\n", "GET / HTTP/1.1\r\nHost\r\n\r\n",
                "POST /eventhandler/publish HTTP/1.1\r\nContent-Length: -5\r\n\r\n"}) {
            try (Socket socket = new Socket("127.0.0.1", server.port())) {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                out.write(garbage.getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String answer = readUntilHeadersOrClose(socket.getInputStream());
                assertTrue(answer.isEmpty() || answer.startsWith("HTTP/1.1 4") || answer.startsWith("HTTP/1.1 505"), (garbage + " -> " + answer).replace("\r\n", " | "));
            }
        }
    }

    /**
     * A client offering another protocol (the JDK's HttpClient offers h2c by default) gets a plain HTTP/1.1
     * answer on a connection that stays usable, not a hang.
     */
    @Test
    void anOfferedProtocolUpgradeIsIgnored() throws Exception {
        String body = "{\"eventType\":\"upgraded\",\"payload\":\"p\"}";
        String publish = "POST /eventhandler/publish HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body;
        String echo = "GET /eventhandler/echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\n\r\n";
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(publish.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = readUntilHeadersOrClose(socket.getInputStream());
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            out.write(echo.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String second = readUntilHeadersOrClose(socket.getInputStream());
            assertTrue(second.contains("HTTP/1.1 200"), second);
        }
    }

    /**
     * Requests that Jersey could not make a URI of (a bad escape, a Host with a space), and a stream whose
     * bad parameter Grizzly dropped without a word: each a 400 that says what is wrong, never a 500.
     */
    static Stream<Arguments> malformedTargetsAndHosts() {
        return Stream.of(
                Arguments.of("GET /eventhandler/echo?a=%zz HTTP/1.1\r\nHost: x\r\n\r\n", "'%zz'", "/eventhandler/echo"),
                Arguments.of("GET /eventhandler/%zz HTTP/1.1\r\nHost: x\r\n\r\n", "'%zz'", "/eventhandler/%zz"),
                Arguments.of("GET /metrics?a=%zz HTTP/1.1\r\nHost: x\r\n\r\n", "'%zz'", "/metrics"),
                Arguments.of("GET /eventhandler/events?eventType=a&b=%z HTTP/1.1\r\nHost: x\r\n\r\n", "'%z'",
                        "/eventhandler/events"),
                Arguments.of("GET /eventhandler/echo?a=\"x\" HTTP/1.1\r\nHost: x\r\n\r\n", "'\"'", "/eventhandler/echo"),
                Arguments.of("GET /eventhandler/e{c}ho HTTP/1.1\r\nHost: x\r\n\r\n", "'{'", "/eventhandler/e{c}ho"),
                Arguments.of("GET /eventhandler/echo HTTP/1.1\r\nHost: a b\r\n\r\n", "Host header 'a b'", "/eventhandler/echo"),
                Arguments.of("GET /eventhandler/echo HTTP/1.1\r\nHost: a:99999\r\n\r\n", "Host header 'a:99999'",
                        "/eventhandler/echo"),
                Arguments.of("POST /eventhandler/publish HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 2\r\n\r\n{}",
                        "more than one Host", "/eventhandler/publish"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedTargetsAndHosts")
    void malformedTargetsAndHostsAre400(String request, String message, String origin) throws Exception {
        assertError(raw(request), 400, message, origin);
    }

    /** Java's URI takes no underscore in a host name; HTTP does, and so do container names. */
    @Test
    void aHostNameWithAnUnderscoreIsServed() {
        for (String path : new String[] {"/eventhandler/echo", "/eventhandler/mgmt/health"}) {
            RawHttp.Answer answer = RawHttp.exchange(server.port(), "GET " + path + " HTTP/1.1\r\n"
                    + "Host: event_handler:8455\r\n\r\n");
            assertEquals(200, answer.status(), answer.body());
        }
    }

    /**
     * A JSON body that starts with NUL bytes: Jackson takes it for UTF-32 and fails with an I/O error, which
     * was a 500 on every endpoint with a body.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"POST, /eventhandler/publish", "POST, /eventhandler/publish/batch", "POST, /eventhandler/subscribe",
            "PUT, /eventhandler/mgmt/subscriptions/1"})
    void aBodyThatIsNotUtf8Is400(String method, String path) throws Exception {
        assertError(raw(method + " " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 8\r\n\r\n\0\0\0\0{}  "), 400, "not JSON in UTF-8", path);
    }

    /** One body framed two ways is how requests are smuggled past a proxy: refused in either order. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"Content-Length: 4\r\nTransfer-Encoding: chunked", "Transfer-Encoding: chunked\r\nContent-Length: 4",
            "Transfer-Encoding: chunked, identity\r\nX-Ignored: 1"})
    void aBodyFramedTwoWaysIsRefusedAndTheConnectionClosed(String framing) throws Exception {
        String event = "{\"eventType\":\"smuggled\",\"payload\":\"x\"}";
        try (RawHttp http = RawHttp.connect(server.port())) {
            http.send("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + framing
                    + "\r\n\r\n" + Integer.toHexString(event.length()) + "\r\n" + event + "\r\n0\r\n\r\n");
            assertError(toReply(http.answer(Duration.ofSeconds(10))), 400, "Transfer-Encoding", "/eventhandler/publish");
            assertTrue(http.closedWithin(Duration.ofSeconds(10)), "the connection is closed");
        }
        assertTrue(server.topic("smuggled").isEmpty(), "nothing was published");
    }

    /** A client must not be able to fill the log: a broken chunked body costs at most a DEBUG line. */
    @Test
    void aMalformedChunkedBodyIs400WithoutAStackTraceInTheLog() throws Exception {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
                org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        root.addAppender(log);
        try (RawHttp http = RawHttp.connect(server.port())) {
            http.send("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n");
            assertError(toReply(http.answer(Duration.ofSeconds(10))), 400, "body is malformed", "/eventhandler/publish");
            assertTrue(http.closedWithin(Duration.ofSeconds(10)), "the connection is closed");
        } finally {
            root.detachAppender(log);
        }
        for (ILoggingEvent event : LoggedLines.of(log)) {
            assertTrue(event.getLevel().toInt() < Level.WARN_INT && event.getThrowableProxy() == null,
                    "logged " + event.getLevel() + ": " + event.getFormattedMessage());
        }
    }

    @Test
    void aRepeatedLastEventIdIsRefusedLikeARepeatedMetadataFilter() throws Exception {
        assertError(raw("GET /eventhandler/events?eventType=a&lastEventId=1&lastEventId=2 HTTP/1.1\r\nHost: x\r\n\r\n"),
                400, "lastEventId is given 2 times", "/eventhandler/events");
    }

    /** The server decodes no content coding; a compressed body was read as it came, or its header ignored. */
    @Test
    void aCompressedBodyIs415() throws Exception {
        ByteArrayOutputStream gzipped = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(gzipped)) {
            gzip.write("{\"eventType\":\"compressed\",\"payload\":\"x\"}".getBytes(StandardCharsets.UTF_8));
        }
        byte[] head = ("POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Encoding: gzip\r\nContent-Length: " + gzipped.size() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[head.length + gzipped.size()];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(gzipped.toByteArray(), 0, request, head.length, gzipped.size());
        RawHttp.Answer answer = RawHttp.exchange(server.port(), request);
        assertError(toReply(answer), 415, "encoded with 'gzip'", "/eventhandler/publish");
        assertEquals("identity", answer.header("Accept-Encoding"));
        assertTrue(server.topic("compressed").isEmpty(), "nothing was published");
    }

    /** 100 000 metadata entries, 1.5 MB: over server.max-body-bytes, refused before it is read. */
    @Test
    void aHugeSubscriptionIsRefusedBeforeItIsRead() throws Exception {
        StringBuilder body = new StringBuilder("{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\","
                + "\"address\":\"h\",\"port\":1},\"notifyUri\":\"n\",\"matchMetaData\":true,\"filterMetaData\":{");
        for (int i = 0; i < 100_000; i++) {
            body.append(i == 0 ? "" : ",").append("\"key").append(i).append("\":\"value\"");
        }
        byte[] bytes = body.append("}}").toString().getBytes(StandardCharsets.UTF_8);
        assertTrue(bytes.length > 1_500_000, bytes.length + " bytes");
        try (RawHttp http = RawHttp.connect(server.port())) {
            http.send("POST /eventhandler/subscribe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + bytes.length + "\r\n\r\n");
            http.send(java.util.Arrays.copyOf(bytes, 16_384));
            assertError(toReply(http.answer(Duration.ofSeconds(10))), 413, "server.max-body-bytes", "/eventhandler/subscribe");
        }
        assertEquals(0, JSON.readTree(server.get("/eventhandler/mgmt/subscriptions").body()).get("count").asInt());
    }

    private static Reply raw(String request) {
        return toReply(RawHttp.exchange(server.port(), request));
    }

    private static Reply toReply(RawHttp.Answer answer) {
        return new Reply(answer.status(), answer.body(), answer.headers());
    }

    /** What the server sent before its headers ended or it closed; a read timeout fails the test. */
    private static String readUntilHeadersOrClose(InputStream in) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        for (int n; (n = in.read(buffer)) > 0; ) {
            bytes.write(buffer, 0, n);
            if (bytes.toString(StandardCharsets.US_ASCII).contains("\r\n\r\n")) {
                break;
            }
        }
        return bytes.toString(StandardCharsets.US_ASCII);
    }

    private static void assertError(Reply response, int status, String message, String origin)
            throws Exception {
        assertEquals(status, response.statusCode(), response.body());
        assertTrue(response.header("Content-Type").startsWith("application/json"),
                "content type of " + response.body());
        JsonNode error = JSON.readTree(response.body());
        assertEquals(status, error.get("errorCode").asInt());
        assertTrue(error.get("errorMessage").asText().contains(message),
                "'" + error.get("errorMessage").asText() + "' should contain '" + message + "'");
        assertEquals(origin, error.get("origin").asText());
        assertTrue(error.hasNonNull("exceptionType"));
        assertTrue(!response.body().contains("at eu.") && !response.body().contains("Exception:"), "no stack trace");
    }
}

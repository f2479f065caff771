package eu.arrowhead.eventhandler.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.LoggedLines;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * RFC 9112's cases a server must refuse, each sent as bytes on a socket: the answer is its error status with
 * an ErrorMessage, the connection closes at once (not after the 60 s idle timeout), nothing is published,
 * and the log gets nothing above DEBUG.
 */
class HttpFramingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PUBLISH = "POST /eventhandler/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
    private static final String EVENT = "{\"eventType\":\"framing\",\"payload\":\"p\"}";
    private static final String ECHO = "GET /eventhandler/echo HTTP/1.1\r\n";
    private static TestServer server;
    private final ListAppender<ILoggingEvent> log = new ListAppender<>();

    @BeforeAll
    static void start() {
        server = TestServer.start("server.idle-timeout-seconds", "60");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @BeforeEach
    void watchTheLog() {
        log.start();
        root().addAppender(log);
    }

    @AfterEach
    void nothingLoudWasLoggedAndNothingPublished() {
        root().detachAppender(log);
        for (ILoggingEvent event : LoggedLines.of(log)) {
            assertTrue(event.getLevel().toInt() < Level.WARN_INT && event.getThrowableProxy() == null,
                    "logged " + event.getLevel() + ": " + event.getFormattedMessage());
        }
        assertTrue(server.topic("framing").isEmpty(), "nothing was published");
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                // start line
                bad("not HTTP at all", "THIS IS NOT HTTP\r\n\r\n", 400, "HTTP version"),
                bad("method that is not a token", "GE(T /eventhandler/echo HTTP/1.1\r\nHost: x\r\n\r\n", 400, "method"),
                bad("two spaces after the method", "GET  /eventhandler/echo HTTP/1.1\r\nHost: x\r\n\r\n", 400, "request target"),
                bad("control character in the target", "GET /eventhandler/\u0001echo HTTP/1.1\r\nHost: x\r\n\r\n", 400, "request target"),
                bad("non-ASCII byte in the target", "GET /eventhandler/\u00e9cho HTTP/1.1\r\nHost: x\r\n\r\n", 400, "request target"),
                bad("version not HTTP/d.d", "GET /eventhandler/echo HTTP/1.x\r\nHost: x\r\n\r\n", 400, "HTTP version"),
                bad("version in lower case", "GET /eventhandler/echo http/1.1\r\nHost: x\r\n\r\n", 400, "HTTP version"),
                bad("HTTP/2.0 in an HTTP/1 request line", "GET /eventhandler/echo HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP/1.1 only"),
                bad("something after the version", "GET /eventhandler/echo HTTP/1.1 x\r\nHost: x\r\n\r\n", 400, "after the HTTP version"),
                bad("whitespace between start line and first header", ECHO + " Host: x\r\n\r\n", 400, "starts with whitespace"),
                // line ends
                bad("bare LF", "GET /eventhandler/echo HTTP/1.1\nHost: x\n\n", 400, "LF alone"),
                bad("bare CR", ECHO + "Host: x\rX-A: 1\r\n\r\n", 400, "CR not followed by LF"),
                // header fields
                bad("header line without a colon", ECHO + "Host: x\r\nX-No-Colon\r\n\r\n", 400, "no colon"),
                bad("whitespace before the colon", PUBLISH + "Content-Length : 2\r\n\r\n{}", 400, "between its name and the colon"),
                bad("tab before the colon", ECHO + "Host\t: x\r\n\r\n", 400, "between its name and the colon"),
                bad("obs-fold", ECHO + "Host: x\r\nX-A: a\r\n b\r\n\r\n", 400, "starts with whitespace"),
                bad("empty header name", ECHO + "Host: x\r\n: v\r\n\r\n", 400, "no name"),
                bad("header name with a separator", ECHO + "Host: x\r\nX(A): 1\r\n\r\n", 400, "header name has '('"),
                bad("NUL in a header value", ECHO + "Host: x\r\nX-A: a\u0000b\r\n\r\n", 400, "control character byte 0x00"),
                bad("ESC in a header value", ECHO + "Host: x\r\nX-A: a\u001bb\r\n\r\n", 400, "control character byte 0x1B"),
                bad("DEL in a header value", ECHO + "Host: x\r\nX-A: a\u007fb\r\n\r\n", 400, "control character byte 0x7F"),
                // Host
                bad("HTTP/1.1 without Host", ECHO + "X-A: 1\r\n\r\n", 400, "HTTP/1.1"),
                bad("two Host headers", "GET /eventhandler/echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "more than one Host"),
                // Content-Length
                bad("Content-Length not a number", PUBLISH + "Content-Length: 2x\r\n\r\n{}", 400, "HTTP/1.1"),
                bad("negative Content-Length", PUBLISH + "Content-Length: -2\r\n\r\n{}", 400, "HTTP/1.1"),
                bad("two different Content-Lengths", PUBLISH + "Content-Length: 2\r\nContent-Length: 40\r\n\r\n"
                        + EVENT, 400, "more than one Content-Length"),
                bad("identical Content-Lengths", PUBLISH + "Content-Length: 38\r\nContent-Length: 38\r\n\r\n" + EVENT,
                        400, "more than one Content-Length"),
                // Transfer-Encoding
                bad("Transfer-Encoding not chunked", PUBLISH + "Transfer-Encoding: gzip\r\n\r\n", 400, "Transfer-Encoding"),
                bad("chunked not the last coding", PUBLISH + "Transfer-Encoding: chunked, gzip\r\n\r\n26\r\n" + EVENT
                        + "\r\n0\r\n\r\n", 400, "Transfer-Encoding"),
                bad("Transfer-Encoding and Content-Length", PUBLISH + "Transfer-Encoding: chunked\r\nContent-Length: 38\r\n\r\n"
                        + "26\r\n" + EVENT + "\r\n0\r\n\r\n", 400, "Transfer-Encoding"),
                bad("chunk size not hex", PUBLISH + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + EVENT + "\r\n0\r\n\r\n",
                        400, "body is malformed"),
                bad("chunk extension", PUBLISH + "Transfer-Encoding: chunked\r\n\r\n26;ext=1\r\n" + EVENT + "\r\n0\r\n\r\n",
                        400, "body is malformed"),
                bad("trailer line without a colon", PUBLISH + "Transfer-Encoding: chunked\r\n\r\n26\r\n" + EVENT
                        + "\r\n0\r\nX-No-Colon\r\n\r\n", 400, "no colon"),
                bad("trailer with whitespace before the colon", PUBLISH + "Transfer-Encoding: chunked\r\n\r\n26\r\n"
                        + EVENT + "\r\n0\r\nX-A : 1\r\n\r\n", 400, "between its name and the colon"),
                // other repeated or unmet headers
                bad("unknown expectation", PUBLISH + "Expect: 999-nope\r\nContent-Length: 38\r\n\r\n" + EVENT, 417, "Expect"),
                bad("two Last-Event-ID headers", "GET /eventhandler/events?eventType=a HTTP/1.1\r\nHost: x\r\n"
                        + "Last-Event-ID: 1\r\nLast-Event-ID: 2\r\n\r\n", 400, "more than one Last-Event-ID"),
                bad("two Content-Type headers", PUBLISH + "Content-Type: text/plain\r\nContent-Length: 38\r\n\r\n" + EVENT,
                        400, "more than one Content-Type"));
    }

    private static Arguments bad(String name, String request, int status, String message) {
        return Arguments.of(name, request, status, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void isRefusedAndTheConnectionClosedAtOnce(String name, String request, int status, String message) throws Exception {
        try (RawHttp http = RawHttp.connect(server.port())) {
            http.send(request);
            RawHttp.Answer answer = http.answer(Duration.ofSeconds(10));
            assertEquals(status, answer.status(), answer.body());
            assertTrue(answer.header("Content-Type").startsWith("application/json"), answer.headers().toString());
            JsonNode error = JSON.readTree(answer.body());
            assertEquals(status, error.get("errorCode").asInt(), answer.body());
            assertTrue(error.hasNonNull("exceptionType"), answer.body());
            assertTrue(error.get("errorMessage").asText().contains(message),
                    "'" + error.get("errorMessage").asText() + "' should contain '" + message + "'");
            assertTrue(http.closedWithin(Duration.ofSeconds(5)), "the connection closes at once");
        }
    }

    /**
     * Requests pipelined behind {@code GET /events} in the same packet wait behind the stream, which has no end of
     * its own: while it is open none is parsed or published, the stream delivers, and nothing is logged. (The review
     * of issue 29 asked whether a read could meet them stored in Grizzly's chain, the pipelining crash: nothing asks
     * for a read while a stream is open.)
     */
    @Test
    void requestsPipelinedBehindAStreamWaitForItWithoutBreakingIt() throws Exception {
        String stream = "GET /eventhandler/events?eventType=ahead HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n";
        String publish = PUBLISH + "Content-Length: " + EVENT.length() + "\r\n\r\n" + EVENT;
        try (RawSubscriber subscriber = RawSubscriber.openRaw(server.port(), stream + publish + publish)) {
            subscriber.awaitText(":ok", 10_000);
            server.publish("ahead", "delivered");
            subscriber.awaitText("delivered", 10_000);
            assertTrue(server.topic("framing").isEmpty(), "nothing behind the stream was published");
        }
    }

    /**
     * Clients that ask and go away before the answer is written (a reset): Jersey logged two stack traces at ERROR
     * for each answer it could not write, so any client could fill the log. Now a DEBUG line each; the check after
     * each test asserts that nothing was logged at WARN or above.
     */
    @Test
    void aClientThatLeavesBeforeItsAnswerCannotFillTheLog() throws Exception {
        ch.qos.logback.classic.Logger leftClients = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
                LeftClients.class);
        Level before = leftClients.getLevel();
        leftClients.setLevel(Level.DEBUG);
        try {
            for (int i = 0; i < 200; i++) {
                try (Socket socket = new Socket("127.0.0.1", server.port())) {
                    socket.setSoLinger(true, 0);
                    socket.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                }
            }
            // Some of the 200 answers find their client gone; their failures were the stack traces.
            Await.until("an answer whose client had gone", Duration.ofSeconds(20), this::leftClientLogged);
            assertEquals(200, server.get("/eventhandler/mgmt/health").statusCode(), "still serving");
        } finally {
            leftClients.setLevel(before);
        }
    }

    /** The appender takes events under its own lock, on the server's threads. */
    private boolean leftClientLogged() {
        synchronized (log) {
            return log.list.stream().anyMatch(event -> event.getLoggerName().equals(LeftClients.class.getName()));
        }
    }

    private static ch.qos.logback.classic.Logger root() {
        return (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }
}

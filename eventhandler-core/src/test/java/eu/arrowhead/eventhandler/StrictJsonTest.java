package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A JSON body is UTF-8 exactly, without a byte order mark, and no object holds a key twice: every other body
 * is a 400 BAD_PAYLOAD that names what is wrong, on every endpoint that takes one. The bodies go out byte for
 * byte on a bare socket, since an HTTP client library would re-encode them.
 */
class StrictJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] BODY_ENDPOINTS = {"POST /eventhandler/publish", "POST /eventhandler/publish/batch",
            "POST /eventhandler/subscribe", "PUT /eventhandler/mgmt/subscriptions/1",
            "POST /eventhandler/publish/authupdate"};
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @AfterEach
    void serverStillServes() {
        assertTrue(server.publish("still.serving", "ok") > 0);
    }

    /** Byte sequences inside a payload string, each with what the answer must say. */
    static Stream<Arguments> malformedSequences() {
        return Stream.of(
                Arguments.of("overlong '/' C0 AF", "C0AF", "overlong encoding (0xC0 ...)"),
                Arguments.of("overlong '/' E0 80 AF", "E080AF", "overlong encoding (0xE0 0x80 ...)"),
                Arguments.of("overlong '/' F0 80 80 AF", "F08080AF", "overlong encoding (0xF0 0x80 ...)"),
                Arguments.of("surrogate ED A0 80", "EDA080", "surrogate encoded in UTF-8 (0xED 0xA0 ...)"),
                Arguments.of("surrogate ED BF BF", "EDBFBF", "surrogate encoded in UTF-8 (0xED 0xBF ...)"),
                Arguments.of("above U+10FFFF F4 90 80 80", "F4908080", "above U+10FFFF (0xF4 0x90 ...)"),
                Arguments.of("lead byte F5", "F5808080", "byte 0xF5, which UTF-8 never uses"),
                Arguments.of("lone continuation byte 80", "80", "continuation byte 0x80 without a lead byte"),
                Arguments.of("sequence cut short", "E4B8", "cut short (0xE4 then 0x62)"),
                Arguments.of("ISO-8859-1 e-acute", "E9", "cut short (0xE9 then 0x62)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedSequences")
    void aMalformedSequenceInThePayloadIs400AndNothingIsPublished(String shape, String hex, String message)
            throws Exception {
        String type = "malformed." + hex.toLowerCase();
        byte[] body = concat(ascii("{\"eventType\":\"" + type + "\",\"payload\":\"a"), HexFormat.of().parseHex(hex),
                ascii("b\"}"));
        assertBadPayload(post("POST /eventhandler/publish", body), "/eventhandler/publish", "not JSON in UTF-8",
                message + " at offset " + (type.length() + 28));
        assertTrue(server.topic(type).isEmpty(), "nothing of " + type + " was published");
    }

    @Test
    void aSequenceCutShortByTheEndOfTheBodyIs400() throws Exception {
        byte[] body = concat(ascii("{\"eventType\":\"cut\",\"payload\":\"x\"}"), HexFormat.of().parseHex("F09F98"));
        assertBadPayload(post("POST /eventhandler/publish", body), "/eventhandler/publish",
                "cut short by the end of the body at offset 33");
    }

    /** A whole valid event, encoded otherwise than in plain UTF-8. */
    static Stream<Arguments> otherEncodings() {
        String event = "{\"eventType\":\"encoded\",\"payload\":\"x\"}";
        Charset utf32le = Charset.forName("UTF-32LE");
        Charset utf32be = Charset.forName("UTF-32BE");
        return Stream.of(
                Arguments.of("UTF-8 with a BOM", concat(bytes("EFBBBF"), event.getBytes(StandardCharsets.UTF_8)),
                        "byte order mark"),
                Arguments.of("UTF-16LE", event.getBytes(StandardCharsets.UTF_16LE), "NUL byte at offset 1"),
                Arguments.of("UTF-16BE", event.getBytes(StandardCharsets.UTF_16BE), "NUL byte at offset 0"),
                Arguments.of("UTF-16LE with a BOM", concat(bytes("FFFE"), event.getBytes(StandardCharsets.UTF_16LE)),
                        "byte 0xFF, which UTF-8 never uses at offset 0"),
                Arguments.of("UTF-16BE with a BOM", concat(bytes("FEFF"), event.getBytes(StandardCharsets.UTF_16BE)),
                        "byte 0xFE, which UTF-8 never uses at offset 0"),
                Arguments.of("UTF-32LE", event.getBytes(utf32le), "NUL byte at offset 1"),
                Arguments.of("UTF-32BE", event.getBytes(utf32be), "NUL byte at offset 0"),
                Arguments.of("UTF-32LE with a BOM", concat(bytes("FFFE0000"), event.getBytes(utf32le)),
                        "byte 0xFF, which UTF-8 never uses at offset 0"),
                Arguments.of("UTF-32BE with a BOM", concat(bytes("0000FEFF"), event.getBytes(utf32be)),
                        "NUL byte at offset 0"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherEncodings")
    void aBodyInAnotherEncodingIs400(String encoding, byte[] body, String message) throws Exception {
        assertBadPayload(post("POST /eventhandler/publish", body), "/eventhandler/publish", "not JSON in UTF-8",
                message);
        assertTrue(server.topic("encoded").isEmpty(), "nothing was published");
    }

    /** The same shapes on every endpoint that takes a JSON body: the check runs before the body is parsed. */
    static Stream<Arguments> everyEndpointWithABody() {
        byte[] overlong = concat(ascii("{\"eventType\":\"a"), bytes("C0AF"), ascii("\"}"));
        byte[] bom = concat(bytes("EFBBBF"), ascii("{}"));
        byte[] utf16 = "{\"eventType\":\"a\"}".getBytes(StandardCharsets.UTF_16LE);
        return Arrays.stream(BODY_ENDPOINTS).flatMap(endpoint -> Stream.of(
                Arguments.of(endpoint, "overlong", wrapIfBatch(endpoint, overlong), "overlong encoding"),
                Arguments.of(endpoint, "UTF-8 BOM", bom, "byte order mark"),
                Arguments.of(endpoint, "UTF-16LE", utf16, "NUL byte")));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("everyEndpointWithABody")
    void everyEndpointRefusesABodyThatIsNotUtf8(String endpoint, String shape, byte[] body, String message)
            throws Exception {
        assertBadPayload(post(endpoint, body), endpoint.substring(endpoint.indexOf(' ') + 1), "not JSON in UTF-8",
                message);
    }

    /** Keys twice in one object, at each depth a body has, each with the answer's words. */
    static Stream<Arguments> duplicateKeys() {
        return Stream.of(
                Arguments.of("top-level eventType", "POST /eventhandler/publish",
                        "{\"eventType\":\"dup.first\",\"eventType\":\"dup.last\",\"payload\":\"x\"}",
                        "duplicate field 'eventType' at line 1, column 37"),
                Arguments.of("payload", "POST /eventhandler/publish",
                        "{\"eventType\":\"dup.last\",\"payload\":\"x\",\"payload\":\"y\"}", "duplicate field 'payload'"),
                Arguments.of("a key in metaData", "POST /eventhandler/publish",
                        "{\"eventType\":\"dup.last\",\"payload\":\"x\",\"metaData\":{\"u\":\"1\",\"v\":\"2\",\"w\":\"3\","
                                + "\"u\":\"4\"}}", "duplicate field 'u'"),
                Arguments.of("a key in source", "POST /eventhandler/publish",
                        "{\"eventType\":\"dup.last\",\"payload\":\"x\",\"source\":{\"systemName\":\"a\","
                                + "\"systemName\":\"b\"}}", "duplicate field 'systemName'"),
                Arguments.of("the second event of a batch", "POST /eventhandler/publish/batch",
                        "[{\"eventType\":\"dup.last\",\"payload\":\"x\"},{\"eventType\":\"dup.last\",\"payload\":\"x\","
                                + "\"timeStamp\":null,\"timeStamp\":null}]", "duplicate field 'timeStamp'"),
                Arguments.of("a subscription's eventType", "POST /eventhandler/subscribe",
                        "{\"eventType\":\"dup.last\",\"eventType\":\"dup.other\",\"subscriberSystem\":"
                                + "{\"systemName\":\"s\"},\"notifyUri\":\"http://127.0.0.1:1/n\"}",
                        "duplicate field 'eventType'"),
                Arguments.of("a key in a subscription's sources", "POST /eventhandler/subscribe",
                        "{\"eventType\":\"dup.last\",\"subscriberSystem\":{\"systemName\":\"s\"},\"notifyUri\":"
                                + "\"http://127.0.0.1:1/n\",\"sources\":[{\"systemName\":\"p\",\"port\":1,\"port\":2}]}",
                        "duplicate field 'port'"),
                Arguments.of("a subscription update's filterMetaData", "PUT /eventhandler/mgmt/subscriptions/1",
                        "{\"eventType\":\"dup.last\",\"subscriberSystem\":{\"systemName\":\"s\"},\"filterMetaData\":"
                                + "{\"k\":\"1\",\"k\":\"1\"}}", "duplicate field 'k'"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("duplicateKeys")
    void aKeyTwiceInOneObjectIs400AndNothingIsPublished(String shape, String endpoint, String body, String message)
            throws Exception {
        assertBadPayload(post(endpoint, body.getBytes(StandardCharsets.UTF_8)),
                endpoint.substring(endpoint.indexOf(' ') + 1), message, "a key may appear only once in an object");
        assertTrue(server.topic("dup.last").isEmpty(), "nothing of dup.last was published or subscribed to");
    }

    /**
     * Valid multi-byte characters, at the edges of the ranges the check refuses next to (U+D7FF, U+E000,
     * U+10FFFF), and a byte order mark's character inside a string: published, and streamed in the very bytes
     * they were sent in.
     */
    @Test
    void multiByteCharactersArePublishedAndStreamedByteForByte() throws Exception {
        String text = "é 中 😀 \uD7FF \uE000 \uDBFF\uDFFF \uFEFF";
        byte[] payload = text.getBytes(StandardCharsets.UTF_8);
        try (Socket stream = openStream("strict.multibyte")) {
            byte[] body = concat(ascii("{\"eventType\":\"strict.multibyte\",\"payload\":\""), payload,
                    ascii("\",\"metaData\":{\"place\":\""), payload, ascii("\"}}"));
            RawHttp.Answer answer = post("POST /eventhandler/publish", body);
            assertEquals(200, answer.status(), answer.body());
            byte[] expected = concat(ascii("\"payload\":\""), payload, ascii("\""));
            byte[] received = readUntil(stream, expected, Duration.ofSeconds(20));
            byte[] place = concat(ascii("\"place\":\""), payload, ascii("\""));
            assertTrue(indexOf(received, place) >= 0, "metaData streamed as sent: "
                    + new String(received, StandardCharsets.UTF_8));
        }
    }

    private static Socket openStream(String eventType) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
        socket.getOutputStream().write(ascii("GET /eventhandler/events?eventType=" + eventType + " HTTP/1.1\r\n"
                + "Host: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"));
        readUntil(socket, ascii("\r\n\r\n"), Duration.ofSeconds(20));
        return socket;
    }

    /** Reads the socket's bytes until {@code expected} is among them; returns all read. */
    private static byte[] readUntil(Socket socket, byte[] expected, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        while (indexOf(received.toByteArray(), expected) < 0) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new AssertionError("did not arrive; got: " + received.toString(StandardCharsets.UTF_8));
            }
            socket.setSoTimeout((int) left);
            int n;
            try {
                n = in.read(buffer);
            } catch (SocketTimeoutException e) {
                continue;
            }
            if (n < 0) {
                throw new AssertionError("stream ended; got: " + received.toString(StandardCharsets.UTF_8));
            }
            received.write(buffer, 0, n);
        }
        return received.toByteArray();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                return i;
            }
        }
        return -1;
    }

    /** A request with {@code body} as it is, on a connection of its own. */
    private static RawHttp.Answer post(String methodAndPath, byte[] body) {
        byte[] head = ascii(methodAndPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n");
        return RawHttp.exchange(server.port(), concat(head, body));
    }

    private static void assertBadPayload(RawHttp.Answer answer, String origin, String... message) throws Exception {
        assertEquals(400, answer.status(), answer.body());
        JsonNode error = JSON.readTree(answer.body());
        assertEquals("BAD_PAYLOAD", error.get("exceptionType").asText(), answer.body());
        assertEquals(origin, error.get("origin").asText());
        for (String part : message) {
            assertTrue(error.get("errorMessage").asText().contains(part),
                    "'" + error.get("errorMessage").asText() + "' should contain '" + part + "'");
        }
    }

    private static byte[] wrapIfBatch(String endpoint, byte[] event) {
        return endpoint.endsWith("/batch") ? concat(ascii("["), event, ascii("]")) : event;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}

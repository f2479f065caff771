package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What the streams mode counts a subscription request as, from the bytes the server answers it with. */
class StreamCensusTest {
    private static final String STREAM_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n";

    private final StreamCensus census = new StreamCensus(new SseEndpoint(URI.create("http://127.0.0.1:1"), "t"));

    private static void feed(FleetProtocol.Stream member, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        member.feed(bytes, 0, bytes.length);
    }

    /** One chunk of chunked transfer encoding. */
    private static String chunk(String data) {
        return Integer.toHexString(data.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + data + "\r\n";
    }

    @Test
    void aStreamThatOpensIsServedAndAnEventOnItIsCounted() {
        FleetProtocol.Stream member = census.stream(0);
        assertFalse(member.live());
        assertEquals(1, census.count(StreamCensus.Outcome.WAITING));
        feed(member, STREAM_HEAD + chunk(":ok\nid: 5\n\n"));
        assertTrue(member.live());
        assertEquals(1, census.count(StreamCensus.Outcome.SERVED));
        feed(member, chunk("id: 6\nevent: t\ndata: {}\n\n"));
        assertEquals(1, census.servedWithEvent());
        member.closed("the server closed it");
        assertEquals(0, census.count(StreamCensus.Outcome.SERVED));
        assertEquals(1, census.count(StreamCensus.Outcome.SERVED_THEN_CLOSED));
    }

    @Test
    void a503AndARefusalStreamAreRefusalsAndTheirCloseChangesNothing() {
        FleetProtocol.Stream plain = census.stream(0);
        feed(plain, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\n{}");
        plain.closed("closed");
        FleetProtocol.Stream inStream = census.stream(1);
        feed(inStream, STREAM_HEAD
                + chunk("retry: 1000\nevent: eventhandler.unavailable\ndata: {\"errorCode\":503}\n\n") + "0\r\n\r\n");
        inStream.closed("closed");
        assertEquals(1, census.count(StreamCensus.Outcome.REFUSED_503));
        assertEquals(1, census.count(StreamCensus.Outcome.REFUSED_IN_STREAM));
        assertEquals(0, census.count(StreamCensus.Outcome.WAITING));
        assertTrue(census.firstRefusal().contains("503"));
    }

    @Test
    void noAnswerOtherAnswersAndGarbageAreToldApart() {
        FleetProtocol.Stream silent = census.stream(0);
        silent.closed("reset");
        feed(census.stream(1), "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        feed(census.stream(2), "SSH-2.0-OpenSSH\r\n\r\n");
        census.stream(3);
        assertEquals(1, census.count(StreamCensus.Outcome.CLOSED_UNANSWERED));
        assertEquals(1, census.count(StreamCensus.Outcome.REFUSED_OTHERWISE));
        assertEquals(1, census.count(StreamCensus.Outcome.BROKEN));
        assertEquals(1, census.count(StreamCensus.Outcome.WAITING));
    }

    @Test
    void anOrdinaryFleetMemberFailsTheFleetWhenItsConnectionEnds() {
        FleetProtocol.Stream member = new SseFleetProtocol(new SseEndpoint(URI.create("http://127.0.0.1:1"), "t"),
                java.util.List.of(frame -> { })).stream(0);
        assertThrows(BenchException.class, () -> member.closed("the server closed a subscriber's connection"));
        assertThrows(BenchException.class, () -> feed(member, STREAM_HEAD
                + chunk("event: eventhandler.unavailable\ndata: {}\n\n")));
    }
}

package eu.arrowhead.eventhandler.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.clients.NodeClients.Seen;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every standard SSE client must get from the Event Handler, run with a client that nobody on this project
 * wrote: named events, no loss across a server restart (whether or not the client saw an event before it), a
 * refusal at the subscriber limit that the client comes back from, and a payload that could break SSE framing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
abstract class EventSourceContract {
    static final ObjectMapper JSON = new ObjectMapper();
    /** An EventSource's readyState once it has given up for good. */
    static final int CLOSED = 2;

    NodeClients clients;
    private String missing;

    abstract NodeClients.Kind kind();

    /**
     * Opens an EventSource named {@code source} on {@code server}'s {@code /eventhandler/events} with {@code query},
     * listening to {@code eventTypes} (a browser's in a page of the server's own origin).
     */
    abstract void open(String source, TestServer server, String query, String... eventTypes) throws InterruptedException;

    @BeforeAll
    void startClients() throws InterruptedException {
        missing = NodeClients.missing(kind());
        if (missing == null) {
            clients = NodeClients.start(kind());
        }
    }

    /** Each test reports the skip, with what is missing, where a class-level skip would show nothing. */
    @BeforeEach
    void requireClients() {
        Assumptions.assumeTrue(missing == null, missing);
    }

    @AfterEach
    void closeEventSources() throws InterruptedException {
        if (clients != null) {
            clients.reset();
        }
    }

    @AfterAll
    void endClients() throws InterruptedException {
        if (clients != null) {
            clients.close();
        }
    }

    @Test
    void namedEventsReachTheirListenersAndOnmessageSeesNothing() throws Exception {
        try (TestServer server = TestServer.start()) {
            open("named", server, "?eventType=named.a&eventType=named.b", "named.a");
            clients.awaitFirst("named", "open");
            List<Long> typeA = new ArrayList<>();
            typeA.add(server.publish("named.a", "1"));
            server.publish("named.b", "2");
            typeA.add(server.publish("named.a", "3"));

            List<Seen> events = clients.awaitEvents("named", "named.a", 2);
            assertEquals(typeA, ids(events), clients.transcript());
            for (Seen event : events) {
                assertEquals("named.a", JSON.readTree(event.data()).get("eventType").asText());
            }
            // Events are dispatched in stream order: a named.b (or the opening) seen by onmessage would be here by now.
            assertEquals(List.of(), clients.events("named", "message"), "onmessage sees no named event");
        }
    }

    @Test
    void aRestartLosesNothingPublishedMeanwhileAfterAnEventWasSeen(@TempDir Path store) throws Exception {
        restartLosesNothing(store, true);
    }

    /** Finding 2: the client must have taken the stream's opening resume point, having seen no event. */
    @Test
    void aRestartLosesNothingPublishedMeanwhileBeforeTheFirstEvent(@TempDir Path store) throws Exception {
        restartLosesNothing(store, false);
    }

    /**
     * The client holds a stream of a server that stops; while it is down, events are published (through an
     * instance on another port that the client cannot reach, over the same event store); the server starts
     * again on its port, and the client, reconnecting by itself with its last event id, gets every one of them.
     */
    private void restartLosesNothing(Path store, boolean eventSeen) throws Exception {
        H2Log log = new H2Log(store);
        List<Long> published = new ArrayList<>();
        int port;
        try (TestServer first = TestServer.start(log.serverSettings())) {
            port = first.port();
            open("restart", first, "?eventType=restart", "restart");
            clients.awaitFirst("restart", "open");
            if (eventSeen) {
                published.add(first.publish("restart", "seen"));
                clients.awaitEvents("restart", "restart", 1);
            }
        }
        try (TestServer meanwhile = TestServer.start(log.serverSettings())) {
            for (int i = 0; i < 20; i++) {
                published.add(meanwhile.publish("restart", "meanwhile-" + i));
            }
        }
        try (TestServer again = TestServer.start(log.serverSettings("server.port", Integer.toString(port)))) {
            clients.awaitEvents("restart", "restart", published.size());
            published.add(again.publish("restart", "live"));
            assertEquals(published, ids(clients.awaitEvents("restart", "restart", published.size())),
                    "every event, once, in order\n" + clients.transcript());
        }
    }

    /** Finding 3: a refusal that a standard client does not take as final. */
    @Test
    void aSubscriberRefusedAtTheLimitIsServedOnceAPlaceIsFree() throws Exception {
        try (TestServer server = TestServer.start("subscriber.max-count", "1")) {
            open("first", server, "?eventType=limited", "limited");
            clients.awaitFirst("first", "open");
            open("second", server, "?eventType=limited", "limited");

            Seen refused = clients.awaitFirst("second", "error");
            assertNotEquals(CLOSED, refused.readyState(), "refused at the subscriber limit, the EventSource must"
                    + " reconnect rather than give up for good\n" + clients.transcript());
            JsonNode why = JSON.readTree(clients.awaitEvents("second", "eventhandler.unavailable", 1).get(0).data());
            assertEquals(503, why.get("errorCode").asInt(), why.toString());

            clients.close("first");
            clients.awaitEvents("second", "eventhandler.open", 1);
            long id = server.publish("limited", "served");
            assertEquals(List.of(id), ids(clients.awaitEvents("second", "limited", 1)));
        }
    }

    @Test
    void theSpecialPayloadArrivesIntact() throws Exception {
        String payload = "CR\r LF\n CRLF\r\n \"double\" 'single' \\ back\\slash \t tab 😀🎉 中文 日本語 한국어"
                + " \u2028 \u2029 end\n\nid: 999\nevent: forged\ndata: forged\n\n";
        try (TestServer server = TestServer.start()) {
            open("special", server, "?eventType=special", "special", "forged");
            clients.awaitFirst("special", "open");
            Reply reply = server.post("/eventhandler/publish",
                    JSON.writeValueAsString(Map.of("eventType", "special", "payload", payload)));
            assertEquals(200, reply.statusCode(), reply.body());
            long id = JSON.readTree(reply.body()).get("id").asLong();
            long after = server.publish("special", "after");

            List<Seen> events = clients.awaitEvents("special", "special", 2);
            assertEquals(List.of(id, after), ids(events), clients.transcript());
            assertEquals(payload, JSON.readTree(events.get(0).data()).get("payload").asText());
            assertEquals(List.of(), clients.events("special", "forged"), "no forged frame");
            assertEquals(List.of(), clients.events("special", "message"), "no forged frame");
        }
    }

    /** The events' ids, as numbers. */
    static List<Long> ids(List<Seen> events) {
        return events.stream().map(event -> Long.parseLong(event.id())).toList();
    }
}

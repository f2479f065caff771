package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 12, left undone at first: two parts of the heap grew with what clients sent, without a bound the heap
 * could hold. Each publish below is twice the size a 64 MiB heap could keep of all of them: before the
 * fixes, the replay windows of 200 topics (4 MiB each allowed) and the queue of one push subscriber that is
 * down (10 000 events allowed) each ran this server out of memory, and push subscriptions (10 000 allowed,
 * each up to a 64 KiB request) did at 180 (a 500 from then on). Now each part stays within its share of the heap
 * ({@code HeapBudget}), and the server answers throughout.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HeapBudgetIT {
    private static final long MIB = 1 << 20;
    /** A sixteenth of a 64 MiB heap: what the replay windows, and the push subscriptions, may take. */
    private static final long SIXTEENTH = 64 * MIB / 16;
    private static final String PAYLOAD = "x".repeat(60_000);

    private static ServerProcess server;
    private static TestClient client;

    @BeforeAll
    static void startA64MiBServerWithoutAStore() throws Exception {
        Path directory = Files.createTempDirectory("heap-budget");
        // No store: the windows and the push queues are then the only places events are kept.
        server = ServerProcess.start(ServerProcess.smallestHeapCommand(directory, "--server.port=0",
                "--server.host=127.0.0.1", "--store.mode=off"));
        URI base = server.awaitListening();
        client = new TestClient(base, null);
    }

    @AfterAll
    static void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            assertFalse(server.output().contains("OutOfMemoryError"), server.output());
            server.close();
        }
    }

    @Test
    @Order(1)
    void theReplayWindowsOfManyTopicsHoldWithinTheirShareAndAResumeIsToldWhatWasCut() throws Exception {
        for (int i = 0; i < 2_000; i++) {
            publish("window-" + (i % 200));
        }
        double held = client.metric("eventhandler_replay_windows_bytes");
        assertTrue(held > 0 && held <= SIXTEENTH, "the windows hold " + held + " bytes");
        assertTrue(client.metric("eventhandler_replay_windows_trims_total") > 0);

        // The first topic's window was cut (and there is no store to serve the rest): the resume says so.
        try (SseStream stream = client.subscribe("?eventType=window-0", "Last-Event-ID", "0")) {
            ReplayGap gap = stream.nextGapNotice(Duration.ofSeconds(10));
            assertEquals(0, gap.requestedAfterId());
            assertTrue(gap.resumedAfterId() > 0, gap.toString());
        }
        assertEquals("Got it!", client.get("/eventhandler/echo").body());
    }

    @Test
    @Order(2)
    void aPushSubscriberThatHangsLosesItsOldestEventsBeforeTheHeapRunsOut() throws Exception {
        // It takes connections (the kernel does, into the backlog) and never answers: each POST waits for
        // push.response-timeout-seconds while the events queue up.
        try (ServerSocket hanging = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Reply subscribed = client.post("/eventhandler/subscribe",
                    subscription("hanging-subscriber", "pushed", hanging.getLocalPort(), 0));
            assertEquals(200, subscribed.statusCode(), subscribed.body());
            for (int i = 0; i < 1_000; i++) {
                publish("pushed");
            }
        }
        double queued = client.metric("eventhandler_push_queued_bytes");
        assertTrue(queued <= SIXTEENTH / 2, "the push queues hold " + queued + " bytes");
        assertTrue(client.metric("eventhandler_push_dropped_events_total{reason=\"queue-full\"}") >= 500,
                "the subscriber lost its oldest events, counted");
        assertEquals("Got it!", client.get("/eventhandler/echo").body());
    }

    /** Last: the subscriptions it leaves take the subscriptions' half of the push share. */
    @Test
    @Order(3)
    void pushSubscriptionsWithLargeFiltersAreRefusedOnceTheirShareIsTaken() throws Exception {
        int accepted = 0;
        Reply refused = null;
        for (int i = 0; i < 300 && refused == null; i++) {
            Reply reply = client.post("/eventhandler/subscribe", subscription("large-" + i, "filtered", 9, 2_500));
            if (reply.statusCode() == 200) {
                accepted++;
            } else {
                refused = reply;
            }
        }
        assertTrue(refused != null, "no subscription was refused");
        assertEquals(503, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("push.total-max-bytes"), refused.body());
        assertTrue(accepted >= 1 && accepted < 20, accepted + " accepted");

        Reply removed = client.send(new org.apache.hc.client5.http.classic.methods.HttpDelete(client.uri(
                "/eventhandler/unsubscribe?event_type=filtered&system_name=large-0")));
        assertEquals(200, removed.statusCode(), removed.body());
        Reply again = client.post("/eventhandler/subscribe", subscription("large-again", "filtered", 9, 2_500));
        assertEquals(200, again.statusCode(), "room was given back: " + again.body());
        assertEquals("Got it!", client.get("/eventhandler/echo").body());
    }

    private static void publish(String eventType) {
        Reply reply = client.post("/eventhandler/publish",
                "{\"eventType\":\"" + eventType + "\",\"payload\":\"" + PAYLOAD + "\"}");
        assertEquals(200, reply.statusCode(), reply.body());
    }

    /** A 4.x subscription request; {@code filterEntries} metadata entries make it large. */
    private static String subscription(String subscriber, String eventType, int port, int filterEntries) {
        StringBuilder filter = new StringBuilder();
        for (int i = 0; i < filterEntries; i++) {
            filter.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
        }
        return "{\"eventType\":\"" + eventType + "\",\"notifyUri\":\"/notify\",\"matchMetaData\":"
                + (filterEntries > 0) + ",\"filterMetaData\":{" + filter + "},\"subscriberSystem\":{\"systemName\":\""
                + subscriber + "\",\"address\":\"127.0.0.1\",\"port\":" + port + "}}";
    }
}

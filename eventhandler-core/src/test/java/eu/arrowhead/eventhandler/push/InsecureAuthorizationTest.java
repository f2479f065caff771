package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * 4.x parity in insecure mode: with {@code security.authorization.enabled} the Event Handler asks the
 * Authorization system, over plain HTTP, which publishers each subscriber may receive from, as the 4.x Event
 * Handler does without TLS too. A stand-in Authorization system plays it; stand-in 4.x subscribers receive.
 */
class InsecureAuthorizationTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int EVENTS = 20;

    private static TestServer start(String authorizationUri) {
        return PushDeliveryTest.server("security.authorization.enabled", "true",
                "security.authorization.uri", authorizationUri,
                "security.authorization.start-retries", "0", "security.authorization.retry-seconds", "1");
    }

    private static void publish(TestServer server, String source, String payload) {
        PushDeliveryTest.publish(server, "{\"eventType\":\"temperature\",\"payload\":\"" + payload
                + "\",\"source\":{\"systemName\":\"" + source + "\",\"address\":\"127.0.0.1\",\"port\":1}}");
    }

    private static List<String> publishFromSensor(TestServer server) {
        List<String> payloads = new ArrayList<>();
        for (int i = 0; i < EVENTS; i++) {
            payloads.add("t" + i);
            publish(server, "sensor-1", "t" + i);
        }
        return payloads;
    }

    /** As the 4.x Authorization system sends it after a rule changes; in insecure mode anyone may. */
    private static void authorizationUpdate(TestServer server) {
        Reply update = server.post("/eventhandler/publish/authupdate", "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\","
                + "\"payload\":\"7\",\"source\":{\"systemName\":\"authorization\",\"address\":\"127.0.0.1\","
                + "\"port\":8445},\"timeStamp\":\"" + Instant.now() + "\"}");
        assertEquals(200, update.statusCode(), update.body());
    }

    /** The sources in effect of the subscription of {@code system}, as the management endpoint lists them. */
    private static String sourcesOf(TestServer server, String system) {
        for (JsonNode subscription : StandInSubscriber.read(server.get("/eventhandler/mgmt/subscriptions").body())
                .get("data")) {
            if (subscription.get("subscriberSystem").get("systemName").asText().equals(system)) {
                JsonNode sources = subscription.get("sources");
                return sources == null || sources.isNull() ? "any" : sources.findValuesAsText("systemName").toString();
            }
        }
        throw new AssertionError("no subscription of " + system);
    }

    @Test
    void aPushSubscriberWithoutAnIntracloudRuleGetsNoEventsAndOneWithARuleGetsThem() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString());
             StandInSubscriber dashboard = StandInSubscriber.healthy();
             StandInSubscriber intruder = StandInSubscriber.healthy()) {
            authorization.authorize("dashboard", "sensor-1");
            PushDeliveryTest.subscribe(server, dashboard.subscription("dashboard", "temperature", ""));
            PushDeliveryTest.subscribe(server, intruder.subscription("intruder", "temperature", ""));
            assertEquals("[sensor-1]", sourcesOf(server, "dashboard"));
            assertEquals("[]", sourcesOf(server, "intruder"), "authorized for no publisher");

            publish(server, "sensor-2", "not authorized for the dashboard");
            List<String> expected = publishFromSensor(server);
            dashboard.awaitEvents(EVENTS);
            assertEquals(expected, dashboard.payloads(), "every event of its authorized publisher, only those");
            // The intruder's filter matches nothing, so no event ever entered its queue: once the dashboard has
            // them all, nothing is queued anywhere and nothing more was delivered.
            Await.until("the dashboard's POSTs counted", WAIT,
                    () -> server.metric("eventhandler_push_delivered_events_total") >= EVENTS);
            assertEquals(0, server.metric("eventhandler_push_queued_events"));
            assertEquals(EVENTS, server.metric("eventhandler_push_delivered_events_total"));
            assertEquals(List.of(), intruder.bodies());
            assertTrue(authorization.checks().get(0).contains("\"port\":" + dashboard.port()),
                    "a push subscriber is checked with its address and port: " + authorization.checks());
        }
    }

    @Test
    void anAuthorizationUpdateAfterANewRuleStartsDelivery() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString());
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("dashboard", "temperature", ""));
            publishFromSensor(server);

            authorization.authorize("dashboard", "sensor-1");
            authorizationUpdate(server);
            assertEquals("[sensor-1]", sourcesOf(server, "dashboard"));

            publish(server, "sensor-1", "after the rule");
            subscriber.awaitEvents(1);
            // One queue per subscriber, in publish order: had any event before the rule reached it, it would
            // have arrived first.
            assertEquals(List.of("after the rule"), subscriber.payloads());
            assertEquals(2, authorization.checks().size(), "asked at the subscription and after the update");
        }
    }

    /**
     * Events queued for a push subscriber when its publisher's rule is deleted are not POSTed after the update is
     * answered: the subscriber's queue holds them behind a POST its endpoint has not answered yet.
     */
    @Test
    void anAuthorizationUpdateStopsTheEventsAlreadyQueuedFromARevokedPublisher() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString());
             StandInSubscriber dashboard = StandInSubscriber.hanging()) {
            authorization.authorize("dashboard", "sensor-1", "sensor-2");
            PushDeliveryTest.subscribe(server, dashboard.subscription("dashboard", "temperature", ""));
            publish(server, "sensor-1", "in flight");
            Await.until("the first POST waits for its answer", WAIT, () -> dashboard.requests() == 1);
            for (int i = 0; i < 5; i++) {
                publish(server, "sensor-1", "queued " + i);
            }
            publish(server, "sensor-2", "queued from the one still allowed");
            assertEquals(6, server.metric("eventhandler_push_queued_events"));

            authorization.authorize("dashboard", "sensor-2");
            authorizationUpdate(server);
            publish(server, "sensor-1", "after the update");
            publish(server, "sensor-2", "after the update, allowed");
            dashboard.release();
            dashboard.awaitEvents(3);
            Await.until("nothing left queued", WAIT, () -> server.metric("eventhandler_push_queued_events") == 0);
            assertEquals(List.of("in flight", "queued from the one still allowed", "after the update, allowed"),
                    dashboard.payloads(), "the POST under way ends; nothing of the revoked publisher follows it");
        }
    }

    /**
     * As the 4.x Event Handler: a new subscription is refused with 503 while the Authorization system cannot
     * be reached; one whose answer an update made it forget gets nothing (fail closed) until it answers again.
     */
    @Test
    void whileTheAuthorizationSystemIsUnreachableNewSubscribersWaitAndForgottenOnesGetNothing() throws Exception {
        int port = TestServer.freePort();
        try (TestServer server = start("http://127.0.0.1:" + port + "/authorization");
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            Reply refused = server.post("/eventhandler/subscribe", subscriber.subscription("dashboard", "temperature", ""));
            assertEquals(503, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("has not yet said which publishers system 'dashboard' may receive"),
                    refused.body());
            try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(port)) {
                authorization.authorize("dashboard", "sensor-1");
                Await.until("the background probe finds the Authorization system", WAIT, () -> server.post(
                        "/eventhandler/subscribe", subscriber.subscription("dashboard", "temperature", ""))
                        .statusCode() == 200);
                assertEquals("[sensor-1]", sourcesOf(server, "dashboard"));
            }
            // Down again, and an update forgets every answer: the subscription is left with no publisher.
            authorizationUpdate(server);
            assertEquals("[]", sourcesOf(server, "dashboard"), "fail closed");
            publishFromSensor(server);
            try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(port)) {
                authorization.authorize("dashboard", "sensor-1");
                Await.until("the probe finds it again and the subscription gets its publisher back", WAIT,
                        () -> sourcesOf(server, "dashboard").equals("[sensor-1]"));
                publish(server, "sensor-1", "once it answers");
                subscriber.awaitEvents(1);
                assertEquals(List.of("once it answers"), subscriber.payloads());
            }
        }
    }

    @Test
    void anSseStreamNamesItsSubscriberAndGetsOnlyItsAuthorizedPublishers() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString());
             TestClient client = server.client(null)) {
            authorization.authorize("dashboard", "sensor-1");

            // The status first, without reading: a stream that is (wrongly) served would never end.
            assertEquals(400, client.streamStatus("?eventType=temperature"));
            assertEquals(403, client.streamStatus("?eventType=temperature&subscriber=intruder"));
            Reply unnamed = server.get("/eventhandler/events?eventType=temperature");
            assertEquals(400, unnamed.statusCode(), unnamed.body());
            assertTrue(unnamed.body().contains("subscriber=dashboard"), unnamed.body());
            Reply noRule = server.get("/eventhandler/events?eventType=temperature&subscriber=intruder");
            assertEquals(403, noRule.statusCode(), noRule.body());
            assertTrue(noRule.body().contains("authorizes system 'intruder' to receive events from no publisher"),
                    noRule.body());

            try (SseStream stream = server.subscribe("?eventType=temperature&subscriber=dashboard")) {
                publish(server, "sensor-2", "not authorized");
                List<String> expected = publishFromSensor(server);
                List<String> received = new ArrayList<>();
                for (int i = 0; i < EVENTS; i++) {
                    received.add(StandInSubscriber.read(stream.nextEvent(WAIT).data()).get("payload").asText());
                }
                assertEquals(expected, received);
            }
            assertEquals(2, authorization.checks().size(), "intruder and dashboard, each once; none for the unnamed");
        }
    }

    @Test
    void anAuthorizationUpdateChangesThePublishersOfAnOpenSseStream() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString())) {
            authorization.authorize("dashboard", "sensor-1", "sensor-2");
            try (SseStream stream = server.subscribe("?eventType=temperature&subscriber=dashboard")) {
                publish(server, "sensor-2", "authorized");
                assertEquals("authorized", payload(stream.nextEvent(WAIT)));

                authorization.authorize("dashboard", "sensor-1");
                authorizationUpdate(server);
                publish(server, "sensor-2", "revoked");
                publish(server, "sensor-1", "still authorized");
                // In publish order: had the revoked publisher's event reached the stream, it would come first.
                assertEquals("still authorized", payload(stream.nextEvent(WAIT)));

                authorization.authorize("dashboard", "sensor-2");
                authorizationUpdate(server);
                publish(server, "sensor-1", "revoked");
                publish(server, "sensor-2", "authorized again");
                assertEquals("authorized again", payload(stream.nextEvent(WAIT)));
            }
        }
    }

    /**
     * An update asks about every subscriber again before it is answered; it asks them together, so that a busy
     * Authorization system delays the answer by its slowest check rather than by the sum of them all.
     */
    @Test
    void anUpdateAsksAboutItsSubscribersTogether() throws Exception {
        int subscribers = 16;
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString());
             TestClient client = server.client(null)) {
            List<SseStream> streams = new ArrayList<>();
            try {
                for (int i = 0; i < subscribers; i++) {
                    authorization.authorize("panel-" + i, "sensor-1");
                    streams.add(client.subscribe("?eventType=temperature&subscriber=panel-" + i));
                }
                authorization.answerAfter(Duration.ofMillis(200));
                for (int i = 0; i < subscribers; i++) {
                    authorization.authorize("panel-" + i, "sensor-2");
                }
                authorizationUpdate(server);
                assertTrue(authorization.mostChecksAtOnce() >= 4,
                        "checks at once: " + authorization.mostChecksAtOnce());
                publish(server, "sensor-1", "revoked");
                publish(server, "sensor-2", "authorized");
                for (SseStream stream : streams) {
                    assertEquals("authorized", payload(stream.nextEvent(WAIT)));
                }
            } finally {
                streams.forEach(SseStream::close);
            }
        }
    }

    /** One subscriber whose check fails during an update loses its publishers; the others get their new ones. */
    @Test
    void aCheckThatFailsDuringAnUpdateFailsClosedForItsSubscriberOnly() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString());
             TestClient client = server.client(null)) {
            authorization.authorize("panel-0", "sensor-1");
            authorization.authorize("panel-1", "sensor-1");
            try (SseStream kept = client.subscribe("?eventType=temperature&subscriber=panel-0");
                 SseStream cut = client.subscribe("?eventType=temperature&subscriber=panel-1")) {
                authorization.authorize("panel-0", "sensor-2");
                authorization.dropChecksOf("panel-1");
                authorizationUpdate(server);
                publish(server, "sensor-1", "revoked");
                publish(server, "sensor-2", "authorized");
                assertEquals("authorized", payload(kept.nextEvent(WAIT)));
                cut.awaitEnd(WAIT);
            }
        }
    }

    private static String payload(SseStream.Frame frame) {
        return StandInSubscriber.read(frame.data()).get("payload").asText();
    }

    @Test
    void anEventWithoutASourceIsRefusedWhileTheAuthorizationSystemDecides() throws Exception {
        try (AuthorizationStandIn authorization = AuthorizationStandIn.plainHttp(0);
             TestServer server = start(authorization.uri().toString())) {
            Reply refused = server.post("/eventhandler/publish", "{\"eventType\":\"temperature\",\"payload\":\"x\"}");
            assertEquals(400, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("source.systemName is required"), refused.body());
            Reply batch = server.post("/eventhandler/publish/batch", "[{\"eventType\":\"t\",\"payload\":\"x\","
                    + "\"source\":{\"systemName\":\"sensor-1\"}},{\"eventType\":\"t\",\"payload\":\"x\"}]");
            assertEquals(400, batch.statusCode(), batch.body());
            assertTrue(batch.body().contains("event 1: source.systemName is required"), batch.body());
            publish(server, "sensor-1", "named");
        }
    }
}

package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** What the listener receives from a real server: every event once, in order, with its fields. */
class DeliveryTest {

    @Test
    void deliversAThousandEventsInOrderEachOnceWithTheirFields() throws Exception {
        try (TestServer server = TestServer.start()) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(server.server().baseUri()).subscribe()) {
                recorder.awaitConnects(1);
                List<Long> published = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    published.add(server.publish("temperature", "reading-" + i));
                }
                recorder.awaitEvents(1000);

                assertEquals(published, recorder.ids());
                for (int i = 0; i < 1000; i++) {
                    Event event = recorder.events.get(i);
                    assertEquals("temperature", event.eventType());
                    assertEquals("reading-" + i, event.payload());
                    assertTrue(event.timeStamp() != null && !event.timeStamp().isEmpty(), "timeStamp of " + event);
                }
                assertEquals(OptionalLong.of(published.get(999)), subscriber.lastEventId());
                assertTrue(subscriber.isConnected());
                assertEquals(List.of(), recorder.disconnects);
            }
        }
    }

    @Test
    void asksTheServerForTheSourceAndMetadataFilters() throws Exception {
        try (TestServer server = TestServer.start()) {
            Recorder recorder = new Recorder();
            // A value with characters that must be URL-encoded. (ASCII only: the server reads query
            // parameters as ISO-8859-1, so a UTF-8 encoded non-ASCII value does not match yet.)
            String place = "Hall 1/a+b&c=d%e";
            try (EventSubscriber subscriber = recorder.builder(server.server().baseUri())
                    .sources("sensor-1")
                    .metaData("unit", "celsius")
                    .metaData("place", place)
                    .subscribe()) {
                recorder.awaitConnects(1);
                publish(server, "match-1", "sensor-1", "celsius", place);
                publish(server, "other-source", "sensor-2", "celsius", place);
                publish(server, "other-unit", "sensor-1", "kelvin", place);
                publish(server, "other-place", "sensor-1", "celsius", "Hall 1/a b&c=d%e");
                publish(server, "match-2", "SENSOR-1", "CELSIUS", place.toUpperCase(java.util.Locale.ROOT));
                recorder.awaitEvents(2);

                // Events arrive in id order, so anything unfiltered would have come before match-2.
                assertEquals(List.of("match-1", "match-2"), recorder.payloads());
                Event first = recorder.events.get(0);
                assertEquals(Map.of("unit", "celsius", "place", place), first.metaData());
                assertEquals(SystemRequest.named("sensor-1"), first.source());
                assertTrue(subscriber.isConnected());
            }
        }
    }

    @Test
    void startsAfterTheGivenIdThenGoesOnLive() throws Exception {
        try (TestServer server = TestServer.start()) {
            long[] ids = LongStream.range(0, 5).map(i -> server.publish("temperature", "old-" + i)).toArray();
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(server.server().baseUri())
                    .startAfterId(ids[1])
                    .subscribe()) {
                recorder.awaitEvents(3);
                long live = server.publish("temperature", "live");
                recorder.awaitEvents(4);

                assertEquals(List.of(ids[2], ids[3], ids[4], live), recorder.ids());
                assertEquals(List.of("old-2", "old-3", "old-4", "live"), recorder.payloads());
                assertEquals(OptionalLong.of(live), subscriber.lastEventId());
                assertEquals(List.of(), recorder.gaps);
            }
        }
    }

    /** A resume older than the server holds: the notice bounds how many events of the type may be missing. */
    @Test
    void aResumeOlderThanTheServerHoldsIsReportedWithAtMostHowManyEventsAreMissing() throws Exception {
        try (TestServer server = TestServer.start("replay.window-events", "2")) {
            long[] ids = LongStream.range(0, 5).map(i -> server.publish("temperature", "old-" + i)).toArray();
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = recorder.builder(server.server().baseUri())
                    .startAfterId(ids[0])
                    .subscribe()) {
                recorder.awaitEvents(2);

                assertEquals(List.of("old-3", "old-4"), recorder.payloads());
                assertEquals(List.of(new ReplayGap(ids[0], ids[2])), recorder.gaps);
                ReplayGap gap = recorder.gaps.get(0);
                assertEquals(OptionalLong.of(2), gap.maxMissingEvents());
                assertFalse(gap.sequenceRestarted());
            }
        }
    }

    @Test
    void aListenerThatThrowsDoesNotEndTheSubscription() throws Exception {
        try (TestServer server = TestServer.start()) {
            Recorder recorder = new Recorder(event -> {
                if (Integer.parseInt(event.payload()) % 2 == 1) {
                    throw new IllegalStateException("listener fails on " + event.payload());
                }
            }) {
                @Override
                public void onListenerError(Event event, Throwable error) {
                    super.onListenerError(event, error);
                    throw new IllegalStateException("and so does the subscription listener");
                }
            };
            try (EventSubscriber subscriber = recorder.builder(server.server().baseUri()).subscribe()) {
                recorder.awaitConnects(1);
                List<Long> published = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    published.add(server.publish("temperature", Integer.toString(i)));
                }
                recorder.awaitEvents(10);
                // The last event's listener has been called; the subscriber moves its resume point once the
                // listener (and here the failing error listener) have returned.
                Await.until("the resume point to pass the last event", Duration.ofSeconds(10),
                        () -> subscriber.lastEventId().equals(OptionalLong.of(published.get(9))));

                assertEquals(published, recorder.ids());
                assertEquals(List.of("1", "3", "5", "7", "9"),
                        recorder.listenerErrors.stream().map(Event::payload).toList());
                assertEquals(OptionalLong.of(published.get(9)), subscriber.lastEventId());
                assertTrue(subscriber.isConnected());
                assertEquals(List.of(), recorder.disconnects);
            }
        }
    }

    private static void publish(TestServer server, String payload, String source, String unit, String place) {
        Reply reply = server.post("/eventhandler/publish", "{\"eventType\":\"temperature\",\"payload\":\"" + payload
                + "\",\"source\":{\"systemName\":\"" + source + "\"},\"metaData\":{\"unit\":\"" + unit
                + "\",\"place\":\"" + place + "\"}}");
        assertEquals(200, reply.statusCode(), reply.body());
    }
}

package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A subscription given several nodes reconnects to the next one, resuming where it left off. */
class FailoverTest {
    private static final String EVENT = "id: 7\nevent: temperature\n"
            + "data: {\"id\":7,\"eventType\":\"temperature\",\"payload\":\"21.5\"}\n\n";

    @Test
    void aStreamThatEndsIsResumedOnTheNextNodeAtOnce() throws Exception {
        try (RawHttpServer first = RawHttpServer.start(n -> RawHttpServer.endedEventStream(":ok\n\n" + EVENT));
             RawHttpServer second = RawHttpServer.start(n -> RawHttpServer.eventStream(":ok\n\n"))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = EventSubscriber.builder(List.of(first.baseUri(), second.baseUri()))
                    .eventTypes("temperature").listener(recorder).subscriptionListener(recorder)
                    // A backoff no test would wait for: the move to another node must not wait for it.
                    .reconnectBackoff(Duration.ofSeconds(30), Duration.ofSeconds(60))
                    .subscribe()) {
                Await.until("a request to the second node", Recorder.DEADLINE, () -> second.requests().size() == 1);
                assertTrue(second.requests().get(0).contains("\r\nLast-Event-ID: 7\r\n"), second.requests().get(0));
                assertEquals(List.of("21.5"), recorder.payloads());
                assertEquals(Duration.ZERO, recorder.reconnectDelays.get(0));
                Await.until("connected to the second node", Recorder.DEADLINE, subscriber::isConnected);
                assertTrue(subscriber.toString().contains(second.baseUri().toString()), subscriber.toString());
            }
        }
    }

    @Test
    void aFirstNodeThatIsDownIsPassedOver() throws Exception {
        URI nobody = URI.create("http://127.0.0.1:" + TestServer.freePort());
        try (RawHttpServer live = RawHttpServer.start(n -> RawHttpServer.eventStream(":ok\n\n" + EVENT))) {
            Recorder recorder = new Recorder();
            try (EventSubscriber subscriber = EventSubscriber.builder(List.of(nobody, live.baseUri()))
                    .eventTypes("temperature").listener(recorder).subscriptionListener(recorder)
                    .reconnectBackoff(Duration.ofSeconds(30), Duration.ofSeconds(60))
                    .subscribe()) {
                recorder.awaitEvents(1);
                assertEquals(List.of("21.5"), recorder.payloads());
                assertTrue(subscriber.isConnected());
            }
        }
    }

    @Test
    void theNodeListIsChecked() {
        URI node = URI.create("http://127.0.0.1:8455");
        assertThrows(IllegalArgumentException.class, () -> EventSubscriber.builder(List.of()));
        assertThrows(IllegalArgumentException.class, () -> EventSubscriber.builder(List.of(node, node)));
        assertThrows(IllegalArgumentException.class,
                () -> EventSubscriber.builder(List.of(node, URI.create("http://127.0.0.1:8455/?x=1"))));
    }
}

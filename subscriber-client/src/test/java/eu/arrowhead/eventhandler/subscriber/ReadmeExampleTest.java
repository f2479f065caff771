package eu.arrowhead.eventhandler.subscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.ReadmeSnippet;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The README's example, verbatim between the markers, run against a real server. */
class ReadmeExampleTest {
    private static final Logger log = LoggerFactory.getLogger(ReadmeExampleTest.class);

    @Test
    void theReadmeShowsThisExampleAsItIs() throws Exception {
        ReadmeSnippet.assertInReadme(Path.of("src/test/java/eu/arrowhead/eventhandler/subscriber/ReadmeExampleTest.java"),
                "subscriber");
    }

    @Test
    @Timeout(60)
    @SuppressWarnings("try") // the example's subscriber is only closed, as an application's would be
    void theReadmeExampleReceivesThePublishedTemperatures() throws Exception {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        ch.qos.logback.classic.Logger logback = (ch.qos.logback.classic.Logger) log;
        logback.addAppender(logged);
        try (TestServer server = TestServer.start()) {
            URI eventHandler = server.server().baseUri();
            CompletableFuture<Void> publisher = CompletableFuture.runAsync(() -> publishOnceSubscribed(server));

            // README:begin subscriber
            BlockingQueue<Event> readings = new LinkedBlockingQueue<>();
            try (EventSubscriber subscriber = EventSubscriber.builder(eventHandler)  // a URI: http://localhost:8455
                    .eventTypes("temperature")
                    .sources("sensor-1")
                    .listener(readings::add)  // runs on the subscription's own thread: hand over, return quickly
                    .subscribe()) {
                for (int i = 0; i < 3; i++) {
                    Event reading = readings.take();
                    log.info("{} from {}: {}", reading.eventType(), reading.source().systemName(), reading.payload());
                }
            }
            // README:end subscriber

            publisher.get();
            assertEquals(List.of("temperature from sensor-1: 21.5", "temperature from sensor-1: 21.6",
                            "temperature from sensor-1: 21.7"),
                    logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList());
        } finally {
            logback.detachAppender(logged);
        }
    }

    /** Waits for the example's subscription to reach the server, then publishes from two sensors. */
    private static void publishOnceSubscribed(TestServer server) {
        try {
            Await.until("the example's subscription", Recorder.DEADLINE,
                    () -> server.get("/eventhandler/mgmt/topics").body().contains("\"subscribers\":1"));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        for (String[] reading : new String[][] {{"sensor-2", "30.0"}, {"sensor-1", "21.5"}, {"sensor-1", "21.6"},
                {"sensor-2", "30.1"}, {"sensor-1", "21.7"}}) {
            Reply reply = server.post("/eventhandler/publish", "{\"eventType\":\"temperature\",\"payload\":\"" + reading[1]
                    + "\",\"source\":{\"systemName\":\"" + reading[0] + "\"}}");
            assertEquals(200, reply.statusCode(), reply.body());
        }
    }
}

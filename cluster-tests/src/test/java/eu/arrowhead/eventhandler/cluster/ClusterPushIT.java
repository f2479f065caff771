package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A push subscriber that is down for 30 s while 5 000 events are published receives all of them, in order, once
 * it is back, although an Event Handler node was killed meanwhile: its cursor is in the stream, and the other
 * nodes deliver from it.
 */
class ClusterPushIT {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterPushIT.class);
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int EVENTS = 5000;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path directory;

    private static HttpResponse<String> post(URI node, String path, String json) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(node.resolve(path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aSubscriberDownFor30SecondsGetsEveryEventInOrderAfterItsNodeWasKilled() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(directory, 3, "--push.retry-max-millis=2000");
             PushTarget target = new PushTarget()) {
            List<URI> nodes = cluster.urisFrom(0);
            HttpResponse<String> subscribed = post(nodes.get(0), "eventhandler/subscribe",
                    target.subscription("pushed", "cluster.push"));
            assertEquals(200, subscribed.statusCode(), subscribed.body());

            long downAt = System.nanoTime();
            target.down();
            List<String> published = new ArrayList<>();
            StringBuilder batch = new StringBuilder();
            for (int i = 0; i < EVENTS; i++) {
                batch.append(batch.length() == 0 ? "[" : ",")
                        .append("{\"eventType\":\"cluster.push\",\"payload\":\"e").append(i).append("\"}");
                published.add("e" + i);
                if ((i + 1) % 250 == 0) {
                    HttpResponse<String> reply = post(nodes.get(i / 250 % 3), "eventhandler/publish/batch",
                            batch.append(']').toString());
                    assertEquals(200, reply.statusCode(), reply.body());
                    batch.setLength(0);
                }
            }
            cluster.node(0).kill();
            long downFor = Duration.ofSeconds(30).toNanos() - (System.nanoTime() - downAt);
            if (downFor > 0) {
                // The scenario is a subscriber down for 30 s: nothing to wait for but the time itself.
                Thread.sleep(downFor / 1_000_000);
            }
            target.up();
            long upAt = System.nanoTime();
            Await.until("the subscriber to receive every event", WAIT,
                    () -> new LinkedHashSet<>(target.payloads()).size() >= EVENTS);

            List<String> received = target.payloads();
            List<String> distinct = new ArrayList<>(new LinkedHashSet<>(received));
            assertEquals(published, distinct, "lost or out of order");
            LOG.warn("push: {} events after 30 s down and a node killed: {} POSTs received ({} repeated), all within"
                    + " {} ms of the subscriber's return", EVENTS, received.size(), received.size() - distinct.size(),
                    (System.nanoTime() - upAt) / 1_000_000);
            assertEquals(0, received.size() - distinct.size(), "delivered twice");
        }
    }
}

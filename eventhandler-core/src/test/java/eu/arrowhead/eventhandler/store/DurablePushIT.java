package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's push criterion, the first half: an Arrowhead 4.x push subscriber that is down (its port refuses
 * connections) while 50 000 events of its type are published, five times the {@code push.queue-capacity} that
 * used to bound what it could get afterwards, receives every one of them once it is back, each once and in order.
 * The server is the jar on the packed defaults (async H2) at the Raspberry Pi's heap, 64 MiB. (The second half,
 * the same across a {@code kill -9} in sync mode, is {@code scripts/bench reliability push}.)
 */
class DurablePushIT {
    private static final String TYPE = "durable.push";
    private static final int EVENTS = 50_000;
    /** The pause between two tries is at most push.retry-max-millis (5 s), and 50 000 POSTs take seconds. */
    private static final long DELIVERY_SECONDS = 120;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path workingDirectory;

    @Test
    void aSubscriberDownWhileFiveQueuesOfEventsArePublishedGetsThemAllInOrderOnceBack() throws Exception {
        int port = TestServer.freePort();
        try (ServerProcess server = ServerProcess.start(ServerProcess.smallestHeapCommand(workingDirectory,
                "--server.port=0", "--server.host=127.0.0.1"))) {
            URI base = server.awaitListening();
            subscribe(base, port);
            long downSince = System.nanoTime();
            EventLoad.seed(base, TYPE, EVENTS);
            awaitMetric(base, "eventhandler_push_failed_attempts_total", 2);

            List<Integer> received = new ArrayList<>();
            HttpServer subscriber = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
            subscriber.setExecutor(Executors.newFixedThreadPool(2));
            subscriber.createContext("/notify", exchange -> {
                try (InputStream in = exchange.getRequestBody()) {
                    String payload = JSON.readTree(in.readAllBytes()).get("payload").asText();
                    synchronized (received) {
                        received.add(Integer.parseInt(payload.substring("seed ".length())));
                        received.notifyAll();
                    }
                }
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            long back = System.nanoTime();
            subscriber.start();
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DELIVERY_SECONDS);
                synchronized (received) {
                    while (received.size() < EVENTS && System.nanoTime() < deadline) {
                        received.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                    }
                }
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
                System.out.printf("down %d ms while %d events were published; all received %d ms after it was back"
                        + "%n", TimeUnit.NANOSECONDS.toMillis(back - downSince), EVENTS, tookMillis);
                List<Integer> got;
                synchronized (received) {
                    got = List.copyOf(received);
                }
                assertEquals(EVENTS, got.size(), "events received within " + DELIVERY_SECONDS + " s");
                for (int i = 0; i < EVENTS; i++) {
                    if (got.get(i) != i) {
                        throw new AssertionError("event " + i + " of the publish order arrived as the " + i
                                + "th, where " + got.get(i) + " came (each once, in order)");
                    }
                }
                assertEquals(0.0, EventLogClient.metric(base, "eventhandler_push_dropped_events_total{reason=\"queue-full\"}"));
                assertEquals(0.0, EventLogClient.metric(base,
                        "eventhandler_push_dropped_events_total{reason=\"retries-exhausted\"}"));
                assertFalse(server.output().contains("OutOfMemoryError"), server.output());
            } finally {
                subscriber.stop(0);
                ((java.util.concurrent.ExecutorService) subscriber.getExecutor()).shutdownNow();
            }
            server.terminate();
            assertTrue(server.process().waitFor(60, TimeUnit.SECONDS));
        }
    }

    private static void subscribe(URI base, int port) throws IOException {
        HttpPost post = new HttpPost(base.resolve("/eventhandler/subscribe"));
        post.setEntity(new StringEntity("{\"eventType\":\"" + TYPE + "\",\"subscriberSystem\":{\"systemName\":"
                + "\"pi-consumer\",\"address\":\"127.0.0.1\",\"port\":" + port + "},\"notifyUri\":\"/notify\"}",
                ContentType.APPLICATION_JSON));
        try (CloseableHttpClient client = HttpClients.createDefault()) {
            String[] answer = client.execute(post, response -> new String[] {
                    Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
            assertEquals("200", answer[0], answer[1]);
        }
    }

    private static void awaitMetric(URI base, String series, double atLeast) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (EventLogClient.metric(base, series) < atLeast) {
            assertTrue(System.nanoTime() < deadline, series + " stayed below " + atLeast);
            // Polling a condition the server exposes only as a metric.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}

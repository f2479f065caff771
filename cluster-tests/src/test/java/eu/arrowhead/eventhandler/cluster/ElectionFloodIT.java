package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.ServerProcess;
import io.nats.client.Connection;
import io.nats.client.Nats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node on the smallest heap ({@code -Xmx64m}, the serial collector) flooded with keyed batches of tiny events
 * while the stream has no leader (two of its three NATS servers down for 10 s): every event sent is awaited by
 * jnats for seconds and sent again every second. Before {@code cluster.max-pending-acks} the sendings of the
 * requests the body budget admits (some 32 000 events here, five sendings each) would have needed about 67 MB: on
 * 4251b5d, before the bound, the node ran out of heap. The node stays up and answers, refuses with 503 and
 * {@code Retry-After} what found no room before its deadline (it waits in line meanwhile), and once a leader is
 * back every batch, retried with its key as the client library retries, is stored once.
 */
class ElectionFloodIT {
    private static final Logger LOG = LoggerFactory.getLogger(ElectionFloodIT.class);
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Duration ELECTION = Duration.ofSeconds(10);
    private static final int PUBLISHERS = 32;
    private static final int BATCHES = 3;
    private static final int EVENTS = 1000;
    /** {@code cluster.max-pending-acks} derived at {@code -Xmx64m}. */
    private static final Pattern PENDING = Pattern.compile("cluster\\.max-pending-acks (\\d+)\\)");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path directory;

    @Test
    void aSmallNodeFloodedThroughAnElectionStaysUpAndStoresEveryEventOnce() throws Exception {
        try (NatsCluster nats = NatsCluster.start(Files.createDirectories(directory.resolve("nats")), 3)) {
            // The node knows the first server only, so that it stays on it while the others are down.
            ServerProcess node = ServerProcess.start(ServerProcess.smallestHeapCommand(
                    Files.createDirectories(directory.resolve("node")), "--server.host=127.0.0.1",
                    "--server.port=0", "--cluster.enabled=true", "--cluster.nats-urls=" + nats.url(0),
                    "--cluster.replicas=3", "--cluster.node-name=flooded"));
            try {
                URI uri = node.awaitListening();
                Matcher pending = PENDING.matcher(node.output());
                assertTrue(pending.find(), "the start's heap line names the bound: " + node.output());
                int bound = Integer.parseInt(pending.group(1));
                long before = ids(publish(uri, "[{\"eventType\":\"flood\",\"payload\":\"before\"}]", "before"))[0];

                nats.kill(1);
                nats.kill(2);
                AtomicInteger refused = new AtomicInteger();
                ExecutorService publishers = Executors.newFixedThreadPool(PUBLISHERS);
                List<Future<List<long[]>>> published = new ArrayList<>();
                for (int p = 0; p < PUBLISHERS; p++) {
                    int publisher = p;
                    published.add(publishers.submit(() -> publishAll(uri, publisher, refused)));
                }
                // The election the test holds: the node answers throughout.
                long electionEnds = System.nanoTime() + ELECTION.toNanos();
                double most = 0;
                while (System.nanoTime() - electionEnds < 0) {
                    assertTrue(node.process().isAlive(), node.output());
                    HttpResponse<String> echo = HTTP.send(HttpRequest.newBuilder(uri.resolve("/eventhandler/echo"))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, echo.statusCode(), echo.body());
                    most = Math.max(most, pendingAcks(uri));
                }
                nats.startServer(1);
                nats.startServer(2);

                Set<Long> ids = new HashSet<>();
                for (Future<List<long[]>> batches : published) {
                    for (long[] batch : batches.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                        assertEquals(EVENTS, batch.length);
                        for (long id : batch) {
                            assertTrue(ids.add(id), "id " + id + " given twice");
                        }
                    }
                }
                publishers.shutdown();
                int total = PUBLISHERS * BATCHES * EVENTS;
                assertEquals(total, ids.size());
                try (Connection reader = Nats.connect(nats.urls())) {
                    assertEquals(before + total, reader.jetStreamManagement().getStreamInfo("EVENTHANDLER")
                            .getStreamState().getLastSequence(), "every event stored once, nothing else");
                }
                LOG.warn("flood through an election: {} events stored once; at most {} acknowledgements awaited at"
                        + " a look (bound {}); {} publishes refused with 503", total, most, bound, refused.get());
                assertTrue(refused.get() > 0, "the flood reached the bound");
                // Every slot comes back, once jnats has given up on the sendings the election left unanswered.
                Await.until("the node to await no acknowledgement", WAIT, () -> pendingAcks(uri) == 0);
                assertTrue(node.process().isAlive(), node.output());
                assertFalse(node.output().contains("OutOfMemoryError"), node.output());
            } finally {
                node.process().destroyForcibly();
            }
        }
    }

    /**
     * One publisher's batches, each sent until it is answered with its ids, as the client library sends: again
     * with its key after a 503, here a fifth of a second later whatever {@code Retry-After} says, to keep the
     * pressure on.
     */
    private static List<long[]> publishAll(URI uri, int publisher, AtomicInteger refused) throws Exception {
        List<long[]> answered = new ArrayList<>();
        for (int b = 0; b < BATCHES; b++) {
            StringBuilder body = new StringBuilder("[");
            for (int i = 0; i < EVENTS; i++) {
                body.append(i == 0 ? "" : ",").append("{\"eventType\":\"flood\",\"payload\":\"x\"}");
            }
            String batch = body.append(']').toString();
            String key = "flood-" + publisher + "-" + b;
            while (true) {
                HttpResponse<String> answer = publish(uri, batch, key);
                if (answer.statusCode() == 200) {
                    answered.add(ids(answer));
                    break;
                }
                assertEquals(503, answer.statusCode(), answer.body());
                assertTrue(answer.headers().firstValue("Retry-After").isPresent(), "Retry-After");
                refused.incrementAndGet();
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
        return answered;
    }

    private static HttpResponse<String> publish(URI uri, String batch, String key) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri.resolve("/eventhandler/publish/batch"))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .timeout(WAIT).POST(HttpRequest.BodyPublishers.ofString(batch)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static long[] ids(HttpResponse<String> answer) {
        assertEquals(200, answer.statusCode(), answer.body());
        assertTrue(answer.body().matches("\\{\"ids\":\\[\\d+(,\\d+)*]}"), answer.body());
        String list = answer.body().replaceAll("[^0-9,]", "");
        return java.util.Arrays.stream(list.split(",")).mapToLong(Long::parseLong).toArray();
    }

    private static double pendingAcks(URI uri) {
        String metrics;
        try {
            metrics = HTTP.send(HttpRequest.newBuilder(uri.resolve("/metrics")).timeout(Duration.ofSeconds(5))
                    .build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        Matcher gauge = Pattern.compile("(?m)^eventhandler_cluster_pending_acks (\\S+)$").matcher(metrics);
        assertTrue(gauge.find(), metrics);
        return Double.parseDouble(gauge.group(1));
    }
}

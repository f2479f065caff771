package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.RawHttp;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.MessageHandler;
import io.nats.client.Nats;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster node's publish waits for the stream's acknowledgement without a thread: while the stream has no
 * leader (two of its three servers down), the node's workers serve other requests, the waiting publishes are
 * answered with their ids once a leader is back, each stored once, one connection's in order, and a stop begun
 * meanwhile answers them before it ends.
 */
class PublishesAwaitingTheStreamTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SUBJECTS = "eventhandler.events.>";
    @TempDir
    Path directory;

    private static String event(String payload) {
        return "{\"eventType\":\"awaiting\",\"payload\":\"" + payload + "\"}";
    }

    private static String keyedPublish(String payload, String key) {
        String body = event(payload);
        return "POST /eventhandler/publish HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: " + key + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    /**
     * A node that knows only the first of the servers, so that it stays on it while the others are down; two
     * workers, so that a few publishes would fill them; a stop that waits as long as a publish may.
     */
    private static TestServer node(NatsCluster nats, String name) {
        return TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.url(0), "cluster.replicas", "3",
                "cluster.node-name", name, "cluster.timeout-seconds", "60", "server.worker-threads", "2",
                "server.shutdown-grace-seconds", "60");
    }

    /**
     * Takes the stream's quorum away (servers 1 and 2 killed), sends each publish on a connection of its own,
     * and waits until each has reached NATS, seen by a plain subscriber on the stream's subjects: every publish
     * has left the worker that parsed it, and none is answered.
     */
    private static List<RawHttp> publishWhileTheStreamHasNoLeader(NatsCluster nats, TestServer node, int count,
                                                                  String prefix) throws Exception {
        nats.kill(1);
        nats.kill(2);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        try (Connection watcher = watchSendings(nats, message ->
                seen.add(new String(message.getData(), StandardCharsets.UTF_8)))) {
            List<RawHttp> connections = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                connections.add(RawHttp.connect(node.port()).send(keyedPublish(prefix + i, prefix + "-key-" + i)));
            }
            Await.until("every publish to reach NATS", WAIT, () -> {
                for (int i = 0; i < count; i++) {
                    String payload = prefix + i;
                    if (seen.stream().noneMatch(data -> data.contains("\"" + payload + "\""))) {
                        return false;
                    }
                }
                return true;
            });
            for (RawHttp connection : connections) {
                assertFalse(connection.answered(), "a publish was answered while the stream had no leader");
            }
            return connections;
        }
    }

    /** A plain NATS subscriber on the stream's subjects, on server 0: it sees every sending of an event. */
    private static Connection watchSendings(NatsCluster nats, MessageHandler handler) throws Exception {
        Connection watcher = Nats.connect(nats.url(0));
        watcher.createDispatcher(handler).subscribe(SUBJECTS);
        watcher.flush(WAIT);
        return watcher;
    }

    private static void bringTheQuorumBack(NatsCluster nats) throws Exception {
        nats.startServer(1);
        nats.startServer(2);
    }

    private static long id(RawHttp.Answer answer) {
        assertEquals(200, answer.status(), answer.body());
        return Long.parseLong(answer.body().replaceAll("\\D", ""));
    }

    @Test
    void publishesWaitingForALeaderLeaveTheWorkersFreeAndAreAnsweredOnceStored() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 3);
             TestServer node = node(nats, "awaiting")) {
            long before = node.publish("awaiting", "before");
            try (SseStream stream = node.subscribe("?eventType=awaiting", "Last-Event-ID", Long.toString(before))) {
                List<RawHttp> waiting = publishWhileTheStreamHasNoLeader(nats, node, 6, "held");

                // Six publishes wait on a node with two workers: before, each held a worker until its answer,
                // and the last four, and this request, waited behind them.
                try (RawHttp echo = RawHttp.connect(node.port())) {
                    echo.send("GET /eventhandler/echo HTTP/1.1\r\nHost: localhost\r\n\r\n");
                    assertEquals(200, echo.answer(Duration.ofSeconds(5)).status());
                }

                bringTheQuorumBack(nats);
                Set<Long> ids = new HashSet<>();
                for (RawHttp connection : waiting) {
                    ids.add(id(connection.answer(WAIT)));
                    connection.close();
                }
                assertEquals(6, ids.size(), "six events, six ids: " + ids);
                // Each was sent several times while the stream had no leader: it is still stored once.
                Set<String> delivered = new HashSet<>();
                long last = before;
                for (SseStream.Frame frame : stream.events(6, WAIT)) {
                    assertTrue(Long.parseLong(frame.id()) > last, frame.id() + " after " + last);
                    last = Long.parseLong(frame.id());
                    assertTrue(ids.contains(last), "delivered " + last + ", answered " + ids);
                    assertTrue(delivered.add(frame.data()), "delivered twice: " + frame.data());
                }
                long after = node.publish("awaiting", "after");
                assertEquals(Long.toString(after), stream.nextEvent(WAIT).id(), "nothing more was stored between");
            }
        }
    }

    private static String keyedBatch(String prefix, int count, String key) {
        StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < count; i++) {
            body.append(i == 0 ? "" : ",").append(event(prefix + i));
        }
        body.append(']');
        return "POST /eventhandler/publish/batch HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: " + key + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    /** A node that knows only the first server and awaits at most {@code maxPendingAcks} acknowledgements. */
    private static TestServer boundedNode(NatsCluster nats, String name, int timeoutSeconds, int maxPendingAcks) {
        return TestServer.start("cluster.enabled", "true", "cluster.nats-urls", nats.url(0), "cluster.replicas", "3",
                "cluster.node-name", name, "cluster.timeout-seconds", Integer.toString(timeoutSeconds),
                "cluster.max-pending-acks", Integer.toString(maxPendingAcks), "publish.max-batch-events", "10");
    }

    /**
     * While the stream has no leader, each unanswered sending of a keyed event stays in jnats' table of awaited
     * answers for seconds, and the event is sent again every second: the node holds no more of them than
     * cluster.max-pending-acks, a publish that finds no room waits in line (its deadline, 30 s here, outlasts the
     * election), and once the quorum is back every waiting one is stored once.
     */
    @Test
    void anElectionHoldsNoMoreSendingsThanTheNodeMayAwait() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 3);
             TestServer node = boundedNode(nats, "bounded", 30, 20)) {
            long before = node.publish("awaiting", "before");
            List<Long> sendings = new CopyOnWriteArrayList<>();
            try (SseStream stream = node.subscribe("?eventType=awaiting", "Last-Event-ID", Long.toString(before));
                 Connection watcher = watchSendings(nats, message -> sendings.add(System.nanoTime()))) {
                nats.kill(1);
                nats.kill(2);
                RawHttp first = RawHttp.connect(node.port()).send(keyedBatch("a", 10, "bounded-a"));
                RawHttp second = RawHttp.connect(node.port()).send(keyedBatch("b", 10, "bounded-b"));
                Await.until("the two batches to reach NATS", WAIT, () -> sendings.size() == 20);

                RawHttp third = RawHttp.connect(node.port()).send(keyedPublish("c", "bounded-c"));

                // Each keyed event is due again after a second, and each sending stays awaited unanswered until
                // jnats gives up on it, 5-10 s after it went: without the bound the events would go again after a
                // second. With it, an event goes again only once jnats has given up on an earlier sending.
                Await.until("an event to be sent again", WAIT, () -> sendings.size() > 20);
                long firstAgainMillis = TimeUnit.NANOSECONDS.toMillis(sendings.get(20) - sendings.get(19));
                assertTrue(firstAgainMillis >= 3000, "sent again " + firstAgainMillis + " ms after the last first"
                        + " sending, before jnats gave up on one");
                assertFalse(third.answered(), "the publish that found no room was answered before its deadline");

                bringTheQuorumBack(nats);
                for (RawHttp publish : List.of(first, second, third)) {
                    RawHttp.Answer answer = publish.answer(WAIT);
                    assertEquals(200, answer.status(), answer.body());
                    publish.close();
                }
                Set<String> delivered = new HashSet<>();
                for (SseStream.Frame frame : stream.events(21, WAIT)) {
                    assertTrue(delivered.add(frame.data()), "delivered twice: " + frame.data());
                }
                long after = node.publish("awaiting", "after");
                assertEquals(Long.toString(after), stream.nextEvent(WAIT).id(), "nothing more was stored between");
                Await.until("every sending to be ended", WAIT,
                        () -> node.metric("eventhandler_cluster_pending_acks") == 0);
            }
        }
    }

    /**
     * A publish that waited in line for room past {@code cluster.timeout-seconds} is refused with 503 naming the
     * bound, having sent nothing (so its retry with the key stores it once, as any retry does).
     */
    @Test
    void aPublishStillInLineAtItsDeadlineIsRefusedHavingSentNothing() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 3);
             TestServer node = boundedNode(nats, "line", 3, 10)) {
            Set<String> sent = ConcurrentHashMap.newKeySet();
            try (Connection watcher = watchSendings(nats, message ->
                    sent.add(new String(message.getData(), StandardCharsets.UTF_8)))) {
                nats.kill(1);
                nats.kill(2);
                RawHttp first = RawHttp.connect(node.port()).send(keyedBatch("a", 10, "line-a"));
                Await.until("the batch to reach NATS", WAIT, () -> sent.size() >= 10);

                long sentAt = System.nanoTime();
                RawHttp.Answer refused = RawHttp.exchange(node.port(), keyedPublish("c", "line-c"));
                long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt);
                assertEquals(503, refused.status(), refused.body());
                assertTrue(refused.body().contains("cluster.max-pending-acks"), refused.body());
                assertTrue(refused.header("Retry-After") != null, "Retry-After");
                assertTrue(waitedMillis >= 3000, "refused after " + waitedMillis + " ms, before its deadline");
                assertTrue(sent.stream().noneMatch(data -> data.contains("\"c\"")), "the refused event was sent");
                assertEquals(503, first.answer(WAIT).status(), "the batch, unacknowledged at its deadline");
                first.close();
            }
        }
    }

    @Test
    void publishesPipelinedOnOneConnectionAreAnsweredInOrder() throws Exception {
        int requests = 200;
        StringBuilder burst = new StringBuilder();
        for (int i = 0; i < requests; i++) {
            burst.append(keyedPublish("pipelined-" + i, "pipelined-key-" + i));
        }
        try (NatsCluster nats = NatsCluster.start(directory, 3);
             TestServer node = node(nats, "pipelined");
             RawHttp http = RawHttp.connect(node.port());
             SseStream stream = node.subscribe("?eventType=awaiting")) {
            http.send(burst.toString());
            long previous = 0;
            List<Long> answered = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                long id = id(http.answer(WAIT));
                assertTrue(id > previous, "answer " + i + " has id " + id + " after " + previous);
                previous = id;
                answered.add(id);
            }
            List<SseStream.Frame> delivered = stream.events(requests, WAIT);
            for (int i = 0; i < requests; i++) {
                assertEquals(Long.toString(answered.get(i)), delivered.get(i).id());
                assertTrue(delivered.get(i).data().contains("\"pipelined-" + i + "\""), delivered.get(i).data());
            }
        }
    }

    @Test
    void aStopBegunWhilePublishesWaitAnswersThemBeforeItEnds() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 3)) {
            long first;
            Set<Long> ids = new HashSet<>();
            try (TestServer node = node(nats, "stopping")) {
                first = node.publish("awaiting", "first");
                List<RawHttp> waiting = publishWhileTheStreamHasNoLeader(nats, node, 3, "stop");
                CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> node.server().shutdown());
                Await.until("the node to take no more connections", WAIT, () -> !accepts(node.port()));
                bringTheQuorumBack(nats);
                for (RawHttp connection : waiting) {
                    ids.add(id(connection.answer(WAIT)));
                    connection.close();
                }
                assertTrue(stopped.get(WAIT.toSeconds(), TimeUnit.SECONDS), "the stop ended cleanly");
            }
            assertEquals(3, ids.size(), "three events, three ids: " + ids);
            try (Connection reader = Nats.connect(nats.url(0))) {
                JetStreamManagement stream = reader.jetStreamManagement();
                Set<String> stored = new HashSet<>();
                // Asked until answered: the stream may still be settling its leader after the quorum came back.
                Await.until("the stream to give the answered events", WAIT, () -> {
                    try {
                        for (long id : ids) {
                            stored.add(new String(stream.getMessage("EVENTHANDLER", id).getData(),
                                    StandardCharsets.UTF_8));
                        }
                        return true;
                    } catch (IOException | JetStreamApiException notYet) {
                        return false;
                    }
                });
                for (int i = 0; i < 3; i++) {
                    String payload = "stop" + i;
                    assertTrue(stored.stream().anyMatch(data -> data.contains("\"" + payload + "\"")),
                            payload + " is in the stream: " + stored);
                }
                assertEquals(first + 3, stream.getStreamInfo("EVENTHANDLER").getStreamState().getLastSequence(),
                        "each stored once");
            }
        }
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            return true;
        } catch (IOException refused) {
            return false;
        }
    }
}

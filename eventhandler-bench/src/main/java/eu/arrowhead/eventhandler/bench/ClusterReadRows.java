package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The cluster scenario's table {@code cluster-reads} (issue 21): what a node spends per event of a type none of its
 * subscribers wants. Node 1's only subscriber wants another type, so it reads that type's subject alone; then a
 * subscriber of two types makes it read every event, as every node did before it read only what its subscribers
 * want; then it reads the one type again, so that the JIT has seen both paths before the last row. The loop
 * publishes to node 0, and its subscriber is on node 2: node 1 only reads.
 */
final class ClusterReadRows {
    static final List<String> COLUMNS = List.of("node 1 reads", "events", "deliveries", "lost", "duplicated",
            "out-of-order", "p50 ms", "p99 ms", "node 1 CPU us/event");
    private static final String WANTED = "bench.idle-a";
    private static final String ALSO_WANTED = "bench.idle-b";
    /** The narrowing waits 5 s of the same wants (ReadNarrowing.SETTLED), then restarts the feed. */
    private static final Duration SCOPE_WAIT = Duration.ofSeconds(30);
    private static final long POLL_MILLIS = 200;

    private ClusterReadRows() {
    }

    /**
     * @param uris       three nodes' base URIs
     * @param readerPid  node 1's process
     */
    static List<List<Object>> run(List<URI> uris, long readerPid, int events, List<String> failures) {
        List<List<Object>> rows = new ArrayList<>();
        URI reader = uris.get(1);
        try (Socket wantsOne = openStream(reader, List.of(WANTED))) {
            rows.add(row(uris, readerPid, events, WANTED, failures));
            try (Socket wantsTwo = openStream(reader, List.of(WANTED, ALSO_WANTED))) {
                rows.add(row(uris, readerPid, events, "all", failures));
            }
            rows.add(row(uris, readerPid, events, WANTED, failures));
        } catch (IOException e) {
            throw new BenchException("cannot hold node 1's idle streams: " + e, e);
        }
        return rows;
    }

    private static List<Object> row(List<URI> uris, long readerPid, int events, String reads, List<String> failures) {
        awaitReads(uris.get(1), reads);
        String label = "node 1 reads " + reads;
        PublishLoop.Result loop = new PublishLoop(Shape.of(label, 1, 1, events), uris.get(0),
                new NodeEnds(new RawHttpEnds(false), List.of(uris.get(0)), List.of(uris.get(2))),
                () -> new ResourceSnapshot(null, null, null, null,
                        ProcStatus.read(Long.toString(readerPid)).snapshot().cpuNanos())).run();
        DeliveryLog.Outcome outcome = loop.outcome();
        LatencyStats stats = LatencyStats.of(outcome.latencyNanos());
        if (!outcome.clean()) {
            failures.add(label + ": " + outcome.problems());
        }
        System.err.println("bench: " + label + ": " + loop.cpuMicrosPerEvent() + " us of node 1's CPU per event");
        return Arrays.asList(reads, loop.events(), outcome.events(), outcome.lost(), outcome.duplicated(),
                outcome.outOfOrder(), stats.p50(), stats.p99(), loop.cpuMicrosPerEvent());
    }

    /** A stream of {@code types} that nothing is published to, held open and never read. */
    private static Socket openStream(URI node, List<String> types) throws IOException {
        StringBuilder query = new StringBuilder();
        for (String type : types) {
            query.append(query.isEmpty() ? "?" : "&").append("eventType=").append(type);
        }
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(node.getHost(), node.getPort()), 5_000);
        socket.getOutputStream().write(("GET /eventhandler/events" + query + " HTTP/1.1\r\nHost: " + node.getHost()
                + ":" + node.getPort() + "\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    /** Waits until the node's health says it reads {@code reads}. */
    private static void awaitReads(URI node, String reads) {
        Deadline deadline = Deadline.in(SCOPE_WAIT, "node 1 reading " + reads);
        URI health = node.resolve("/eventhandler/mgmt/health");
        while (!HttpProbe.get(health, Duration.ofSeconds(5)).body().contains("\"reads\":\"" + reads + "\"")) {
            if (deadline.passed()) {
                throw new BenchException("node 1 does not read " + reads + " after " + SCOPE_WAIT.toSeconds() + " s");
            }
            try {
                TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted", e);
            }
        }
    }
}

package eu.arrowhead.eventhandler.publisher;

import eu.arrowhead.eventhandler.api.BatchPublishResponse;
import eu.arrowhead.eventhandler.api.PublishResponse;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends encoded publish and batch requests to the node the publisher is on, retried as the {@link RetryPolicy}
 * says: an attempt that fails in a way worth retrying moves the publisher to the next node. Thread-safe.
 */
final class NodePublisher implements PublishQueue.Sender {
    private static final Logger LOG = LoggerFactory.getLogger(NodePublisher.class);
    /** Names a single publish in messages. */
    static final String PUBLISH = "publish";
    /** Names a batch publish in messages. */
    static final String BATCH = "batch publish";
    /**
     * Refusals of a batch that mean the server stored none of it and may take its events one at a time: an event
     * it finds invalid (400), one this caller may not publish (403, secure mode), a body too large (413) or not
     * JSON (415), a body that came too slowly (408), no batch endpoint (404, 405). Not 401: each event alone
     * would be refused the same way. Not 5xx: those do not say that nothing was stored.
     */
    private static final Set<Integer> NOTHING_STORED = Set.of(400, 403, 404, 405, 408, 413, 415);

    private final Nodes nodes;
    private final Transport transport;
    private final Retrier retrier;
    private final RequestKeys requestKeys;

    NodePublisher(Nodes nodes, Transport transport, Retrier retrier, RequestKeys requestKeys) {
        this.nodes = nodes;
        this.transport = transport;
        this.retrier = retrier;
        this.requestKeys = requestKeys;
    }

    /**
     * Publishes one encoded event and returns its id.
     *
     * @param startNanos when the publish was asked for: its deadline counts from it
     */
    @Override
    public long send(String eventType, byte[] body, String key, long startNanos) throws PublishException {
        long id = retrier.run(PUBLISH, key, startNanos, timeout -> {
            int node = nodes.current();
            return onNode(node, () -> transport.post(PUBLISH, nodes.node(node).publish(), body, key, timeout,
                    PublishResponse.class));
        }).id();
        LOG.debug("published {} as id {}", eventType, id);
        return id;
    }

    /**
     * Publishes queued events, each encoded alone, in one batch request under a key of its own.
     *
     * @throws BatchRefused if the server refused the batch on its first attempt in a way that says it stored none
     *                      of it ({@link #NOTHING_STORED}); after an earlier attempt failed (a 503 from a cluster
     *                      may come after part of a batch was stored) a refusal is a {@link PublishException}
     */
    @Override
    public List<Long> sendBatch(List<byte[]> bodies, long startNanos) throws PublishException, BatchRefused {
        AtomicInteger attempts = new AtomicInteger();
        try {
            return sendBatch(jsonArray(bodies), bodies.size(), requestKeys.next(), startNanos, attempts);
        } catch (PublishException e) {
            if (e.kind() == PublishException.Kind.REFUSED && attempts.get() == 1
                    && NOTHING_STORED.contains(e.statusCode())) {
                throw new BatchRefused(BatchRefused.reasonFor(e), e);
            }
            throw e;
        }
    }

    /**
     * Publishes an encoded JSON array of {@code count} events in one request and returns their ids, in order.
     *
     * @param startNanos when the publish was asked for: its deadline counts from it
     */
    List<Long> sendBatch(byte[] body, int count, String key, long startNanos) throws PublishException {
        return sendBatch(body, count, key, startNanos, new AtomicInteger());
    }

    /** @param attempts counts the attempts made */
    private List<Long> sendBatch(byte[] body, int count, String key, long startNanos, AtomicInteger attempts)
            throws PublishException {
        List<Long> ids = retrier.run(BATCH, key, startNanos, timeout -> {
            attempts.incrementAndGet();
            int node = nodes.current();
            BatchPublishResponse answer = onNode(node, () -> transport.post(BATCH, nodes.node(node).batch(), body,
                    key, timeout, BatchPublishResponse.class));
            if (answer.ids() == null || answer.ids().size() != count) {
                throw PublishException.unreadableAnswer(BATCH, 200, new IllegalStateException(
                        "expected " + count + " ids, got " + answer.ids()));
            }
            return answer.ids();
        });
        LOG.debug("published a batch of {} events as ids {} to {}", count, ids.get(0), ids.get(ids.size() - 1));
        return List.copyOf(ids);
    }

    /** One call to a node, which may fail. */
    @FunctionalInterface
    private interface NodeCall<T> {
        T run() throws PublishException;
    }

    /** One attempt on one node; a failure worth retrying moves the publisher to the next node. */
    private <T> T onNode(int node, NodeCall<T> attempt) throws PublishException {
        try {
            return attempt.run();
        } catch (PublishException e) {
            if (e.retryable()) {
                nodes.failed(node);
            }
            throw e;
        }
    }

    /**
     * The events' JSON objects as one JSON array, without decoding them again: the bytes
     * {@link Transport#encode} gives the list, which the server's fingerprint of an {@code Idempotency-Key} needs.
     */
    static byte[] jsonArray(List<byte[]> bodies) {
        int length = bodies.size() + 1;
        for (byte[] body : bodies) {
            length += body.length;
        }
        ByteArrayOutputStream array = new ByteArrayOutputStream(length);
        array.write('[');
        for (int i = 0; i < bodies.size(); i++) {
            if (i > 0) {
                array.write(',');
            }
            array.writeBytes(bodies.get(i));
        }
        array.write(']');
        return array.toByteArray();
    }
}

package eu.arrowhead.eventhandler.publisher;

import eu.arrowhead.eventhandler.api.BatchPublishResponse;
import eu.arrowhead.eventhandler.api.PublishResponse;
import java.io.ByteArrayOutputStream;
import java.util.List;
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

    /** Publishes queued events, each encoded alone, in one batch request under a key of its own. */
    @Override
    public List<Long> sendBatch(List<byte[]> bodies, long startNanos) throws PublishException {
        return sendBatch(jsonArray(bodies), bodies.size(), requestKeys.next(), startNanos);
    }

    /**
     * Publishes an encoded JSON array of {@code count} events in one request and returns their ids, in order.
     *
     * @param startNanos when the publish was asked for: its deadline counts from it
     */
    List<Long> sendBatch(byte[] body, int count, String key, long startNanos) throws PublishException {
        List<Long> ids = retrier.run(BATCH, key, startNanos, timeout -> {
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

    /** The events' JSON objects as one JSON array, without decoding them again. */
    private static byte[] jsonArray(List<byte[]> bodies) {
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

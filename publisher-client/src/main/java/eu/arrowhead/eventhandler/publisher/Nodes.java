package eu.arrowhead.eventhandler.publisher;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Event Handler nodes a publisher may publish to, and the one it publishes to now. One node is the common
 * case; with several (cluster mode), a failed attempt that may be retried moves every later attempt to the next
 * node, round robin, and the publisher stays there while it answers. Thread-safe.
 */
final class Nodes {
    /** One node's two endpoints. */
    record Node(URI baseUri, Transport.Endpoint publish, Transport.Endpoint batch) {
    }

    private final List<Node> nodes;
    private final AtomicInteger current = new AtomicInteger();

    Nodes(List<URI> baseUris, Transport transport) {
        List<Node> list = new ArrayList<>(baseUris.size());
        for (URI baseUri : baseUris) {
            String base = baseUri.toString().replaceFirst("/+$", "");
            list.add(new Node(baseUri, transport.endpoint(URI.create(base + "/eventhandler/publish")),
                    transport.endpoint(URI.create(base + "/eventhandler/publish/batch"))));
        }
        this.nodes = List.copyOf(list);
    }

    /** The node to publish to now, with its index for {@link #failed}. */
    int current() {
        return current.get();
    }

    Node node(int index) {
        return nodes.get(index);
    }

    /**
     * An attempt on node {@code index} failed in a way worth retrying: the next attempt, of this publish or
     * another, goes to the next node. Attempts that failed on a node already left behind change nothing.
     */
    void failed(int index) {
        if (nodes.size() > 1) {
            current.compareAndSet(index, (index + 1) % nodes.size());
        }
    }

    /** Every node's base URI, for log lines. */
    List<URI> baseUris() {
        return nodes.stream().map(Node::baseUri).toList();
    }
}

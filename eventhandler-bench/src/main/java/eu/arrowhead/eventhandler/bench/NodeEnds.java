package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The ends of a loop over the nodes of a cluster: a publisher's events spread over the publishing nodes in turn,
 * the subscribers shared out evenly over the subscribing nodes, through other ends (raw HTTP). The base a loop
 * passes is ignored.
 */
final class NodeEnds implements PublishLoop.Ends {
    private final PublishLoop.Ends ends;
    private final List<URI> publishTo;
    private final List<URI> subscribeAt;
    private final AtomicInteger nextPublisher = new AtomicInteger();

    NodeEnds(PublishLoop.Ends ends, List<URI> publishTo, List<URI> subscribeAt) {
        this.ends = ends;
        this.publishTo = List.copyOf(publishTo);
        this.subscribeAt = List.copyOf(subscribeAt);
    }

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        return ends.subscribe(subscribeAt.get(0), log, live);
    }

    @Override
    public PublishLoop.Subscription subscribeAll(URI base, List<DeliveryLog> logs, Deadline live) {
        List<PublishLoop.Subscription> opened = new ArrayList<>();
        try {
            for (int node = 0; node < subscribeAt.size(); node++) {
                List<DeliveryLog> share = new ArrayList<>();
                for (int i = node; i < logs.size(); i += subscribeAt.size()) {
                    share.add(logs.get(i));
                }
                if (!share.isEmpty()) {
                    opened.add(ends.subscribeAll(subscribeAt.get(node), share, live));
                }
            }
        } catch (RuntimeException e) {
            PublishLoop.Subscription.all(opened).close();
            throw e;
        }
        return PublishLoop.Subscription.all(opened);
    }

    /** A publisher on one node, or, over several, one that publishes each event on the next node in turn. */
    @Override
    public PublishLoop.Publisher publisher(URI base) {
        if (publishTo.size() == 1) {
            return ends.publisher(publishTo.get(0));
        }
        List<PublishLoop.Publisher> each = publishTo.stream().map(ends::publisher).toList();
        return new PublishLoop.Publisher() {
            @Override
            public long publish(String eventType, String payload) {
                return each.get(nextPublisher.getAndIncrement() % each.size()).publish(eventType, payload);
            }

            @Override
            public void close() {
                each.forEach(PublishLoop.Publisher::close);
            }
        };
    }
}

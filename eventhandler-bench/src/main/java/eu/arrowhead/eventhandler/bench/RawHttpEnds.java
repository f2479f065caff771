package eu.arrowhead.eventhandler.bench;

import java.net.URI;

/**
 * Plain HTTP at both ends, with no client library in between: a raw-socket SSE reader, and Apache HttpClient
 * over a kept-alive connection or, as the original Event Handler's clients did, a new connection per publish.
 */
final class RawHttpEnds implements PublishLoop.Ends {
    private final boolean newConnectionPerPublish;

    RawHttpEnds(boolean newConnectionPerPublish) {
        this.newConnectionPerPublish = newConnectionPerPublish;
    }

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        return SseReader.open(new SseEndpoint(base, PublishLoop.EVENT_TYPE), log::received, live);
    }

    @Override
    public PublishLoop.Publisher publisher(URI base) {
        return new HttpPublisher(base, newConnectionPerPublish);
    }
}

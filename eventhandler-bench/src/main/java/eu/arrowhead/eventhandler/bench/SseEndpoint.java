package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/**
 * Where and how to subscribe to one event type, as a new stream or resuming after an id. The request is
 * written by hand because the bench's subscribers speak HTTP over plain sockets, with no client library
 * between the bytes and the clock.
 */
record SseEndpoint(URI base, String eventType, OptionalLong lastEventId) {

    /** A new stream: no resume point. */
    SseEndpoint(URI base, String eventType) {
        this(base, eventType, OptionalLong.empty());
    }

    /** The same subscription resuming after {@code id}, as a client sends {@code Last-Event-ID}. */
    SseEndpoint resumingAfter(long id) {
        return new SseEndpoint(base, eventType, OptionalLong.of(id));
    }

    InetSocketAddress address() {
        return new InetSocketAddress(base.getHost(), base.getPort());
    }

    byte[] request() {
        return ("GET /eventhandler/events?eventType=" + URLEncoder.encode(eventType, StandardCharsets.UTF_8)
                + " HTTP/1.1\r\n"
                + "Host: " + base.getHost() + ":" + base.getPort() + "\r\n"
                + "Accept: text/event-stream\r\n"
                + "Cache-Control: no-cache\r\n"
                + (lastEventId.isPresent() ? "Last-Event-ID: " + lastEventId.getAsLong() + "\r\n" : "")
                + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }
}

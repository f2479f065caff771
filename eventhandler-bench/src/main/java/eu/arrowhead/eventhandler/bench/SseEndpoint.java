package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * Where and how to subscribe to one event type. The request is written by hand because the bench's
 * subscribers speak HTTP over plain sockets, with no client library between the bytes and the clock.
 */
record SseEndpoint(URI base, String eventType) {

    InetSocketAddress address() {
        return new InetSocketAddress(base.getHost(), base.getPort());
    }

    byte[] request() {
        return ("GET /eventhandler/events?eventType=" + URLEncoder.encode(eventType, StandardCharsets.UTF_8)
                + " HTTP/1.1\r\n"
                + "Host: " + base.getHost() + ":" + base.getPort() + "\r\n"
                + "Accept: text/event-stream\r\n"
                + "Cache-Control: no-cache\r\n"
                + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }
}

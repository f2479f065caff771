package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.config.SubscriberLimits;
import org.glassfish.grizzly.http.HttpRequestPacket;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.util.MimeHeaders;

/**
 * The heap an SSE stream holds while it is open, estimated from its request: Grizzly keeps the request and
 * the bytes it was read from for the life of the stream, so a client that sends a header of 8 000 bytes
 * holds 70% more than a bare request does. (The header fields themselves are given back once the response's
 * headers are written, {@link OpenStreamRelease}.) The supervisor charges each stream this much against the
 * subscribers' share of the heap ({@link SubscriberLimits#streamsHeapBytes}).
 */
final class StreamHeap {
    private StreamHeap() {
    }

    static long charge(Request request) {
        HttpRequestPacket packet = request.getRequest();
        MimeHeaders headers = packet.getHeaders();
        long bytes = SubscriberLimits.STREAM_BASE_BYTES + packet.getRequestURIRef().getOriginalRequestURIBC().getLength()
                + packet.getQueryStringDC().getLength();
        for (int i = 0; i < headers.size(); i++) {
            bytes += SubscriberLimits.STREAM_HEADER_BYTES + headers.getName(i).getLength() + headers.getValue(i).getLength();
        }
        return Math.max(bytes, SubscriberLimits.MIN_STREAM_BYTES);
    }
}

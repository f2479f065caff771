package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.protocol.SseFrames;
import java.io.IOException;
import java.time.Duration;
import org.glassfish.grizzly.http.server.Response;

/**
 * The answer to a stream request that cannot be served now (a limit reached, shutting down, the event store
 * unreadable or busy): a {@code 200} event stream that carries only {@code retry:} and an
 * {@value ErrorMessage#UNAVAILABLE_EVENT_TYPE} notice with the {@link ErrorMessage}, and then ends.
 *
 * <p>Why not a 503: by the SSE standard an EventSource (a browser's, the npm package) fails for good on any
 * status but 200, so a subscriber refused for a moment would never come back. A stream that ends is, to
 * them, a lost connection: they reconnect after {@code retry}. Our subscriber client and curl read the
 * notice, and {@code Retry-After} is there for clients that look at headers.
 */
final class StreamRefusal {
    private final Duration retry;
    private final String retryAfterSeconds;

    /** @param retry {@code sse.retry-millis}: how long a client waits before it reconnects */
    StreamRefusal(Duration retry) {
        this.retry = retry;
        this.retryAfterSeconds = Long.toString(Math.max(1, (retry.toMillis() + 999) / 1000));
    }

    /** Writes the refusal to a response that has not been committed; it ends when the response completes. */
    void write(Response response, String origin, String message) throws IOException {
        byte[] body = frames(origin, message);
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("Retry-After", retryAfterSeconds);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /**
     * The refusal's frames alone, for a stream whose headers and opening are out already (a resume that waited
     * for its replay): the client reads the same notice, and the stream's end makes it reconnect.
     */
    byte[] frames(String origin, String message) {
        return SseFrames.refusal(retry, origin, message);
    }
}

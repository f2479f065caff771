package eu.arrowhead.eventhandler.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import eu.arrowhead.eventhandler.api.ReplayGap;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real SSE connection to the test server, read by a thread of its own that parses frames as the SSE
 * specification does and queues them with their arrival time.
 */
public final class SseStream implements AutoCloseable {
    /** One SSE frame: an event, or a comment (then {@code comment} is set and the rest null). */
    public record Frame(String id, String event, String data, String comment, long receivedNanos) {
        public boolean isComment() {
            return comment != null;
        }
    }

    private static final Frame END = new Frame(null, null, null, null, 0);
    private static final ObjectReader GAP_READER = new ObjectMapper().readerFor(ReplayGap.class);

    private final HttpResponse<InputStream> response;
    private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private final Thread reader;
    private volatile boolean endedCleanly;
    private volatile String lastEventId;

    private SseStream(HttpResponse<InputStream> response) {
        this.response = response;
        this.reader = new Thread(this::read, "sse-test-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Opens a stream at {@code uri}; waits until the server's opening comment has arrived. */
    public static SseStream open(HttpClient client, URI uri, String... headers) {
        // Never reused: see the surefire configuration in the parent POM for why (JDK-8338569).
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).GET().header("Connection", "close");
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try {
            HttpResponse<InputStream> response = client.send(request.build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            SseStream stream = new SseStream(response);
            if (response.statusCode() == 200) {
                Frame opening = stream.next(Duration.ofSeconds(5));
                if (opening == null || !opening.isComment()) {
                    throw new AssertionError("the stream did not open with a comment: " + opening);
                }
            }
            return stream;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public HttpResponse<InputStream> response() {
        return response;
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String id = null;
            String event = null;
            StringBuilder data = null;
            String comment = null;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (id != null) {
                        lastEventId = id;
                    }
                    if (comment != null || data != null) {
                        frames.add(new Frame(id, event, data == null ? null : data.toString(),
                                data == null ? comment : null, System.nanoTime()));
                    }
                    id = null;
                    event = null;
                    data = null;
                    comment = null;
                } else if (line.startsWith(":")) {
                    comment = line.substring(1);
                } else {
                    int colon = line.indexOf(':');
                    String field = colon < 0 ? line : line.substring(0, colon);
                    String value = colon < 0 ? "" : line.substring(colon + 1).replaceFirst("^ ", "");
                    switch (field) {
                        case "id" -> id = value;
                        case "event" -> event = value;
                        case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                        default -> throw new AssertionError("unexpected SSE field: " + line);
                    }
                }
            }
            endedCleanly = true;
        } catch (IOException e) {
            // the stream was cut: reported as its end
        } finally {
            frames.add(END);
        }
    }

    /**
     * The last {@code id} the stream has set, as a browser's EventSource keeps it: also set by frames that
     * carry no event, such as the opening one and the one that ends a page of the event log.
     */
    public String lastEventId() {
        return lastEventId;
    }

    /** The next frame of any kind, or null if none arrives in time; throws if the stream ended. */
    public Frame next(Duration timeout) throws InterruptedException {
        Frame frame = frames.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (frame == END) {
            frames.add(END);
            throw new StreamEndedException();
        }
        return frame;
    }

    /** The next event frame, skipping comments; fails if none arrives before the deadline. */
    public Frame nextEvent(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            Frame frame = left > 0 ? next(Duration.ofNanos(left)) : null;
            if (frame == null) {
                throw new AssertionError("no event within " + timeout);
            }
            if (!frame.isComment()) {
                return frame;
            }
        }
    }

    /**
     * The next event, which must be a replay-gap notice (with no id: a notice must not move the client's last
     * event id); returns what it says.
     */
    public ReplayGap nextGapNotice(Duration timeout) throws InterruptedException {
        Frame notice = nextEvent(timeout);
        if (!ReplayGap.EVENT_TYPE.equals(notice.event()) || notice.id() != null) {
            throw new AssertionError("expected a replay-gap notice without an id, got " + notice);
        }
        try {
            return GAP_READER.readValue(notice.data());
        } catch (IOException e) {
            throw new AssertionError("a replay-gap notice that is not a ReplayGap: " + notice.data(), e);
        }
    }

    /** The next {@code count} events, skipping comments. */
    public List<Frame> events(int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Frame> events = new ArrayList<>(count);
        while (events.size() < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("received " + events.size() + " of " + count + " events within " + timeout);
            }
            events.add(nextEvent(Duration.ofNanos(left)));
        }
        return events;
    }

    /** Waits until the server ends the stream; fails if it does not within the timeout. */
    public void awaitEnd(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                next(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            }
        } catch (StreamEndedException expected) {
            return;
        }
        throw new AssertionError("the stream did not end within " + timeout);
    }

    /** Whether the server ended the stream properly (the end of a chunked body), not by cutting it off. */
    public boolean endedCleanly() {
        return endedCleanly;
    }

    @Override
    public void close() {
        try {
            response.body().close();
        } catch (IOException ignored) {
            // closing a stream that is already gone
        }
    }

    /** The server ended the stream. */
    public static final class StreamEndedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StreamEndedException() {
            super("the SSE stream ended");
        }
    }
}

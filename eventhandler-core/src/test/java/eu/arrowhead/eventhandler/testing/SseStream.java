package eu.arrowhead.eventhandler.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.StreamOpening;
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
 * specification does and queues them with their arrival time. A comment is queued as a frame of its own
 * as soon as its line arrives (the specification ignores comment lines wherever they are).
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
    private static final ObjectReader OPENING_READER = new ObjectMapper().readerFor(StreamOpening.class);

    private final HttpResponse<InputStream> response;
    private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private final Thread reader;
    private volatile boolean endedCleanly;
    private volatile String lastEventId;
    private volatile String retry;
    private Frame opening;

    private SseStream(HttpResponse<InputStream> response) {
        this.response = response;
        this.reader = new Thread(this::read, "sse-test-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Opens a stream at {@code uri}; waits until the server's opening has arrived: its comment, and for a new
     * stream (one that resumes nothing) its {@value StreamOpening#EVENT_TYPE} notice, which it checks.
     *
     * @throws RefusedException if the server refused the stream for now
     */
    public static SseStream open(HttpClient client, URI uri, String... headers) {
        // Never reused: see the surefire configuration in the parent POM for why (JDK-8338569).
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).GET().header("Connection", "close");
        boolean resumes = uri.getRawQuery() != null && uri.getRawQuery().matches("(.*&)?lastEventId=.*");
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
            resumes |= headers[i].equalsIgnoreCase("Last-Event-ID");
        }
        try {
            HttpResponse<InputStream> response = client.send(request.build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            SseStream stream = new SseStream(response);
            if (response.statusCode() == 200) {
                Frame comment = stream.next(Duration.ofSeconds(5));
                if (comment != null && ErrorMessage.UNAVAILABLE_EVENT_TYPE.equals(comment.event())) {
                    stream.close();
                    throw new RefusedException(comment.data());
                }
                if (comment == null || !comment.isComment()) {
                    throw new AssertionError("the stream did not open with a comment: " + comment);
                }
                if (!resumes) {
                    stream.opening = stream.openingNotice(stream.next(Duration.ofSeconds(5)));
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

    /** Checks that a new stream's second frame is the opening notice, with data that repeats its id. */
    private Frame openingNotice(Frame frame) {
        if (frame == null || !StreamOpening.EVENT_TYPE.equals(frame.event()) || frame.id() == null) {
            throw new AssertionError("a new stream did not open with an " + StreamOpening.EVENT_TYPE
                    + " notice with an id: " + frame);
        }
        try {
            StreamOpening data = OPENING_READER.readValue(frame.data());
            if (!frame.id().equals(Long.toString(data.lastEventId()))) {
                throw new AssertionError("the opening notice's id and data differ: " + frame);
            }
        } catch (IOException e) {
            throw new AssertionError("an opening notice whose data is not a StreamOpening: " + frame, e);
        }
        return frame;
    }

    /** The id where a new stream starts, from its opening notice; null for a resumed stream. */
    public String openingId() {
        return opening == null ? null : opening.id();
    }

    /** The value of the last {@code retry} field the stream has carried, or null. */
    public String retry() {
        return retry;
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String id = null;
            String event = null;
            StringBuilder data = null;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (id != null) {
                        lastEventId = id;
                    }
                    if (data != null) {
                        frames.add(new Frame(id, event, data.toString(), null, System.nanoTime()));
                    }
                    id = null;
                    event = null;
                    data = null;
                } else if (line.startsWith(":")) {
                    frames.add(new Frame(null, null, null, line.substring(1), System.nanoTime()));
                } else {
                    int colon = line.indexOf(':');
                    String field = colon < 0 ? line : line.substring(0, colon);
                    String value = colon < 0 ? "" : line.substring(colon + 1).replaceFirst("^ ", "");
                    switch (field) {
                        case "id" -> id = value;
                        case "event" -> event = value;
                        case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                        case "retry" -> retry = value;
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
     * The last {@code id} the stream has set, as a browser's EventSource keeps it: also set by the opening
     * notice, and by a frame without data such as the one that ends a page of the event log.
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

    /** The server refused the stream for now: it answered with its refusal stream. */
    public static final class RefusedException extends AssertionError {
        private static final long serialVersionUID = 1L;

        RefusedException(String notice) {
            super("the stream was refused for now: " + notice);
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

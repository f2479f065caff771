package eu.arrowhead.eventhandler.bench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A subscriber that, whenever its stream ends (cut off as slow, refused, the server restarted), opens it
 * again resuming after the last id it was given, as an SSE client does with {@code Last-Event-ID}: the id
 * of its last event, or of the stream's opening when no event has come yet. Its {@link IdRecorder} keeps
 * the ids of every connection, so that losses, duplicates and disorder across the reconnections show.
 */
final class ResumingSubscriber implements AutoCloseable {
    private final SseEndpoint endpoint;
    private final IdRecorder recorder = new IdRecorder();
    private final Frames frames = new Frames();
    private SseReader reader;
    private int reconnections;
    private String lastProblem;

    private ResumingSubscriber(SseEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    /** Subscribes as a new stream and returns once it is open. */
    static ResumingSubscriber open(SseEndpoint endpoint, Deadline deadline) {
        ResumingSubscriber subscriber = new ResumingSubscriber(endpoint);
        subscriber.reader = SseReader.openForEveryFrame(endpoint, subscriber.frames, deadline);
        return subscriber;
    }

    /**
     * Opens the stream again if it has ended, resuming after the last id; a failure to open is kept for
     * the report and tried again at the next call.
     */
    void keepOpen(Deadline deadline) {
        if (reader != null && !reader.ended()) {
            return;
        }
        if (reader != null) {
            try {
                reader.checkAlive();
            } catch (BenchException e) {
                lastProblem = e.getMessage();
            }
            reader.close();
            reader = null;
        }
        reconnections++;
        try {
            reader = SseReader.openForEveryFrame(endpoint.resumingAfter(frames.lastId), frames, deadline);
        } catch (BenchException e) {
            lastProblem = e.getMessage();
        }
    }

    /** Events received so far, repeats included. */
    int received() {
        return recorder.count();
    }

    int reconnections() {
        return reconnections;
    }

    /** Replay-gap notices received: events the subscriber will never get. */
    int gapNotices() {
        return frames.gaps.get();
    }

    /** Why the stream last ended or could not be opened; null if it never did. */
    String lastProblem() {
        return lastProblem;
    }

    /** The ids received, in order; read once closed. */
    long[] ids() {
        return recorder.ids();
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
    }

    /** What the streams bring, on their reader threads one after another. */
    private final class Frames implements Consumer<SseFrame> {
        private final AtomicInteger gaps = new AtomicInteger();
        private volatile long lastId;

        @Override
        public void accept(SseFrame frame) {
            if (frame.isEvent()) {
                recorder.accept(frame);
            } else if (frame.isGap()) {
                gaps.incrementAndGet();
            }
            if (frame.id() != null && !frame.id().isEmpty()) {
                lastId = Long.parseLong(frame.id());
            }
        }
    }
}

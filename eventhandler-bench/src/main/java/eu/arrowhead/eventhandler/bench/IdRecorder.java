package eu.arrowhead.eventhandler.bench;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The ids of a stream's events in arrival order; the frames' data is not even parsed, to keep up. One
 * recorder may outlive several connections of one subscriber: a client that resumes keeps its history.
 */
final class IdRecorder implements Consumer<SseFrame> {
    private final AtomicInteger count = new AtomicInteger();
    private long[] ids = new long[1 << 16];

    @Override
    public void accept(SseFrame frame) {
        int next = count.get();
        if (next == ids.length) {
            ids = Arrays.copyOf(ids, ids.length * 2);
        }
        ids[next] = Long.parseLong(frame.id());
        count.set(next + 1);
    }

    int count() {
        return count.get();
    }

    /** The last id received, or 0 before the first; read once the reader's thread has stopped. */
    long last() {
        int n = count.get();
        return n == 0 ? 0 : ids[n - 1];
    }

    /** Read once the reader's thread has stopped. */
    long[] ids() {
        return Arrays.copyOf(ids, count.get());
    }
}

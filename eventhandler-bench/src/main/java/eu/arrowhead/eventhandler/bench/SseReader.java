package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.util.function.Consumer;

/**
 * One subscriber with a thread of its own that reads an SSE stream from a plain {@link Socket}: the time
 * of a frame is when its bytes were parsed here, with no client library's buffering in between.
 */
final class SseReader implements PublishLoop.Subscription {
    private static final long JOIN_MILLIS = 5_000;

    private final Socket socket;
    private final Consumer<SseFrame> frames;
    private final boolean everyFrame;
    private final Thread thread;
    private volatile boolean opened;
    private volatile boolean closing;
    private volatile String failure;

    private SseReader(Socket socket, Consumer<SseFrame> frames, boolean everyFrame) {
        this.socket = socket;
        this.frames = frames;
        this.everyFrame = everyFrame;
        this.thread = new Thread(this::read, "bench-sse-reader");
        thread.setDaemon(true);
    }

    /**
     * Subscribes and returns once the stream's opening has arrived. A refusal (the server's
     * {@value SseFrame#UNAVAILABLE} notice) ends the stream as a failure.
     *
     * @param events told of every application event, on the reader's thread; an exception it throws ends
     *               the stream and is reported by {@link #checkAlive}
     */
    static SseReader open(SseEndpoint endpoint, Consumer<SseFrame> events, Deadline deadline) {
        return open(endpoint, events, false, deadline);
    }

    /**
     * Like {@link #open(SseEndpoint, Consumer, Deadline)}, but {@code frames} is told of every frame, the
     * server's own too (replay gaps, id-only frames, a refusal, which does not end the stream here: the
     * server ends it), and the stream may open with a refusal.
     */
    static SseReader openForEveryFrame(SseEndpoint endpoint, Consumer<SseFrame> frames, Deadline deadline) {
        return open(endpoint, frames, true, deadline);
    }

    private static SseReader open(SseEndpoint endpoint, Consumer<SseFrame> frames, boolean everyFrame,
                                  Deadline deadline) {
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(endpoint.address(), deadline.remainingMillis());
            socket.getOutputStream().write(endpoint.request());
        } catch (IOException e) {
            closeQuietly(socket);
            throw new BenchException("cannot subscribe at " + endpoint.base() + ": " + e, e);
        }
        SseReader reader = new SseReader(socket, frames, everyFrame);
        reader.thread.start();
        try {
            deadline.require(() -> reader.opened, reader::checkAlive);
        } catch (RuntimeException e) {
            reader.close();
            throw e;
        }
        return reader;
    }

    /** Fails if the stream has ended or broken: whatever waits on it would wait in vain. */
    @Override
    public void checkAlive() {
        String problem = failure;
        if (problem != null) {
            throw new BenchException("the subscriber's stream failed: " + problem);
        }
    }

    /** Whether the stream has ended or broken, as {@link #checkAlive} would throw. */
    boolean ended() {
        return failure != null;
    }

    private void read() {
        HttpStreamDecoder decoder = new HttpStreamDecoder(new SseParser(this::frame));
        byte[] buffer = new byte[16_384];
        try {
            InputStream in = socket.getInputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                decoder.feed(buffer, 0, n);
            }
            failure = "the server closed the connection" + (decoder.ended() ? " after ending the stream" : "");
        } catch (IOException e) {
            if (!closing) {
                failure = e.toString();
            }
        } catch (RuntimeException e) {
            failure = e.getMessage();
            closeQuietly(socket);
        }
    }

    private void frame(SseFrame frame) {
        if (frame.opensStream() || (everyFrame && frame.isRefusal())) {
            opened = true;
        }
        if (everyFrame) {
            frames.accept(frame);
        } else if (frame.isRefusal()) {
            throw new BenchException("the server refused the stream: " + frame.data());
        } else if (frame.isEvent()) {
            frames.accept(frame);
        }
    }

    /** Closes the connection and waits for the thread, so that all it recorded is visible to the caller. */
    @Override
    public void close() {
        closing = true;
        closeQuietly(socket);
        try {
            thread.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new BenchException("the subscriber's thread did not stop within " + JOIN_MILLIS + " ms");
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing more to release
        }
    }
}

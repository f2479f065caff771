package eu.arrowhead.eventhandler.delivery;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;

/**
 * A subscriber's connection standing in for Grizzly's. It takes writes while fewer than {@code room} bytes wait
 * unread, as Grizzly's output does up to {@code subscriber.send-buffer-bytes}, and its client reads only when the
 * test says ({@link #read}, {@link #readUntil}), or never: a stalled client. A chosen write can fail, or be held
 * half-way until the test lets it go on ({@link #holdWrite}), while the client closes the connection.
 *
 * <p>It also checks what Grizzly cannot be asked afterwards: that nothing was written, and no response ended,
 * while the socket had no room ({@link #writesWithoutRoom}), and that nothing written was left unflushed.
 */
final class StandInPort implements StreamPort {
    private final long room;
    private final ByteArrayOutputStream sent = new ByteArrayOutputStream();
    private Listener listener;
    private long unread;
    private long unflushed;
    private boolean open = true;
    private boolean watching;
    private boolean wantsWritable;
    private int writes;
    private int writesWithoutRoom;
    private int notifyRequests;
    private boolean ended;
    private boolean terminated;
    private String refusal;
    private int failAtWrite;
    private int holdAtWrite;
    private CountDownLatch holding;
    private CountDownLatch letGo;

    /** @param room the bytes the connection holds unread before {@link #canWrite} says no */
    StandInPort(long room) {
        this.room = room;
    }

    /** A client that reads at once: never short of room. */
    static StandInPort keepingUp() {
        return new StandInPort(Long.MAX_VALUE);
    }

    @Override
    public synchronized void bind(Listener listener) {
        if (this.listener != null) {
            throw new IllegalStateException("bound twice");
        }
        this.listener = listener;
    }

    @Override
    public synchronized boolean canWrite() {
        return unread < room;
    }

    @Override
    public void write(byte[] frame) throws IOException {
        boolean hold;
        synchronized (this) {
            writes++;
            if (unread >= room) {
                writesWithoutRoom++;
            }
            if (writes == failAtWrite) {
                open = false;
            }
            hold = writes == holdAtWrite;
        }
        if (hold) {
            // Outside this port's monitor, which the test's other threads take while the write is held.
            holding.countDown();
            awaitUninterruptibly(letGo);
        }
        synchronized (this) {
            if (!open) {
                throw new IOException("Connection reset by peer");
            }
            sent.write(frame, 0, frame.length);
            unread += frame.length;
            unflushed += frame.length;
            notifyAll();
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        if (!open) {
            throw new IOException("Broken pipe");
        }
        unflushed = 0;
    }

    /** As Grizzly's: at once when the socket has room or the connection is closed; one request at a time. */
    @Override
    public void notifyCanWrite() {
        boolean writable;
        synchronized (this) {
            if (wantsWritable) {
                throw new IllegalStateException("Illegal attempt to set a new handler before the existing handler"
                        + " has been notified.");
            }
            notifyRequests++;
            writable = unread < room;
            wantsWritable = open && !writable;
        }
        if (!open()) {
            listener.failed(new IOException("Connection closed"));
        } else if (writable) {
            listener.writable();
        }
    }

    @Override
    public synchronized void watchClose() {
        watching = true;
    }

    @Override
    public synchronized void unwatchClose() {
        watching = false;
    }

    @Override
    public synchronized boolean isOpen() {
        return open;
    }

    @Override
    public void headersWritten() {
    }

    @Override
    public synchronized void refuse(StreamRefusal refusal, String message) throws IOException {
        byte[] body = refusal.frames(EventStreamHandler.PATH, message);
        sent.write(body, 0, body.length);
        this.refusal = message;
        ended = true;
        notifyAll();
    }

    @Override
    public synchronized void end() {
        if (unread >= room) {
            // Grizzly would block on the last chunk.
            writesWithoutRoom++;
        }
        ended = true;
        notifyAll();
    }

    /** Grizzly tells the connection's close listeners of a termination too, on the terminating thread. */
    @Override
    public void terminate() {
        boolean tell;
        synchronized (this) {
            tell = open && watching;
            open = false;
            terminated = true;
            notifyAll();
        }
        if (tell) {
            listener.clientClosed();
        }
    }

    /** The client reads up to {@code bytes}; a writer waiting for room is told, on this thread, as Grizzly does. */
    void read(long bytes) {
        boolean tell;
        synchronized (this) {
            unread -= Math.min(bytes, unread);
            tell = wantsWritable && unread < room;
            if (tell) {
                wantsWritable = false;
            }
        }
        if (tell) {
            listener.writable();
        }
    }

    /**
     * The client reads whatever arrives until the number of bytes it has received passes {@code done} (asked again
     * at every write and {@link #wake}), or the stream ends.
     *
     * @return the bytes received
     */
    long readUntil(LongPredicate done, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long waiting;
            synchronized (this) {
                waiting = unread;
                if (waiting == 0) {
                    if (done.test(sent.size()) || ended || !open) {
                        return sent.size();
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        String text = text();
                        throw new AssertionError("after " + timeout + " the client has received " + sent.size()
                                + " bytes, ending: " + text.substring(Math.max(0, text.length() - 300)));
                    }
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                    continue;
                }
            }
            read(waiting);
        }
    }

    /** Has {@link #readUntil} ask its condition again. */
    synchronized void wake() {
        notifyAll();
    }

    /**
     * The client closes the connection: a write under way fails, the stream hears of it if it listens, and a writer
     * waiting for room is told of the error too.
     */
    void closeByClient() {
        boolean tell;
        boolean waiting;
        synchronized (this) {
            tell = open && watching;
            waiting = wantsWritable;
            open = false;
            wantsWritable = false;
            notifyAll();
        }
        if (tell) {
            listener.clientClosed();
        }
        if (waiting) {
            listener.failed(new IOException("Connection closed"));
        }
    }

    /** The connection fails while the stream waits for room: Grizzly's write handler is told of the error. */
    void failWhileWaiting(IOException cause) {
        boolean tell;
        synchronized (this) {
            open = false;
            tell = wantsWritable;
            wantsWritable = false;
        }
        if (tell) {
            listener.failed(cause);
        }
    }

    /** The {@code n}th write (from 1) finds the connection reset. */
    synchronized void failAtWrite(int n) {
        failAtWrite = n;
    }

    /**
     * Holds the {@code n}th write (from 1) before it takes its bytes: {@code holding} opens once it is held, and it
     * goes on once {@code letGo} opens.
     */
    synchronized void holdWrite(int n, CountDownLatch holding, CountDownLatch letGo) {
        this.holdAtWrite = n;
        this.holding = holding;
        this.letGo = letGo;
    }

    private synchronized boolean open() {
        return open;
    }

    synchronized byte[] bytes() {
        return sent.toByteArray();
    }

    synchronized String text() {
        return sent.toString(StandardCharsets.UTF_8);
    }

    synchronized int writes() {
        return writes;
    }

    synchronized int writesWithoutRoom() {
        return writesWithoutRoom;
    }

    synchronized long unflushed() {
        return unflushed;
    }

    synchronized int notifyRequests() {
        return notifyRequests;
    }

    synchronized boolean waitingForRoom() {
        return wantsWritable;
    }

    synchronized boolean watching() {
        return watching;
    }

    synchronized boolean ended() {
        return ended;
    }

    synchronized boolean terminated() {
        return terminated;
    }

    synchronized String refusal() {
        return refusal;
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                if (!latch.await(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("a held write was never let go");
                }
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}

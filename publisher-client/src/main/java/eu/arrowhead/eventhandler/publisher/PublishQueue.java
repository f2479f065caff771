package eu.arrowhead.eventhandler.publisher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The events of {@link EventPublisher#publishAsync publishAsync} and the one thread that publishes them, one at a
 * time in the order they came: an event being retried holds back those behind it, so order holds while the
 * server is away. Bounded by the bytes of the queued bodies, the one being sent included. Thread-safe.
 */
final class PublishQueue {
    private static final AtomicInteger THREADS = new AtomicInteger();

    /** Publishes one queued event, with its retries, and returns its id. */
    @FunctionalInterface
    interface Sender {
        /**
         * @param startNanos when the event was queued: its deadline counts from it
         */
        long send(String eventType, byte[] body, String key, long startNanos) throws PublishException;
    }

    private final long maxBytes;
    private final Sender sender;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}; started by the first event. */
    private ThreadPoolExecutor thread;
    /** The thread of {@link #thread}, once started. */
    private volatile Thread worker;
    /** Guarded by {@link #lock}. */
    private boolean closed;
    /** The bodies of the events not yet done; guarded by {@link #lock}. */
    private long queuedBytes;

    PublishQueue(long maxBytes, Sender sender) {
        this.maxBytes = maxBytes;
        this.sender = sender;
    }

    /**
     * Queues an event, or refuses it at once if its body does not fit.
     *
     * @return its id, once published; failed with {@link PublishException.Kind#QUEUE_FULL} if it did not fit
     * @throws IllegalStateException if the queue is closed
     */
    CompletableFuture<Long> submit(String eventType, byte[] body, String key, long startNanos) {
        Queued event = new Queued(eventType, body, key, startNanos);
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("publisher is closed");
            }
            if (queuedBytes + body.length > maxBytes) {
                return CompletableFuture.failedFuture(PublishException.queueFull(EventPublisher.PUBLISH + " of "
                        + eventType + " not queued: the queue holds " + queuedBytes + " bytes, and this "
                        + body.length + "-byte event would pass maxQueuedBytes (" + maxBytes + ")"));
            }
            queuedBytes += body.length;
            if (thread == null) {
                thread = newThread();
            }
            thread.execute(event);
        }
        return event.future;
    }

    /**
     * Takes no more events, lets those queued be published for at most {@code wait}, then fails the rest. From
     * the queue's own thread (a future's dependent action) it does not wait: the events still queued fail.
     */
    void close(Duration wait) {
        ThreadPoolExecutor stopping;
        synchronized (lock) {
            closed = true;
            stopping = thread;
        }
        if (stopping != null) {
            for (Runnable event : stop(stopping, wait)) {
                ((Queued) event).abandon();
            }
        }
    }

    /** Lets the queued events finish, for at most {@code wait}; returns those that did not start. */
    private List<Runnable> stop(ThreadPoolExecutor stopping, Duration wait) {
        stopping.shutdown();
        if (Thread.currentThread() == worker) {
            List<Runnable> queued = new ArrayList<>(); // closing from a callback: the thread cannot wait for itself
            stopping.getQueue().drainTo(queued);
            return queued;
        }
        try {
            if (stopping.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                return List.of();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return stopping.shutdownNow();
    }

    private ThreadPoolExecutor newThread() {
        return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), runnable -> {
            Thread started = new Thread(runnable, "eventhandler-publisher-" + THREADS.incrementAndGet());
            started.setDaemon(true);
            worker = started;
            return started;
        });
    }

    /** One queued event, encoded, counted in {@link #queuedBytes} until it is done. */
    private final class Queued implements Runnable {
        private final String eventType;
        private final byte[] body;
        private final String key;
        private final long startNanos;
        private final CompletableFuture<Long> future = new CompletableFuture<>();

        Queued(String eventType, byte[] body, String key, long startNanos) {
            this.eventType = eventType;
            this.body = body;
            this.key = key;
            this.startNanos = startNanos;
        }

        /** Publishes the event; its bytes are given back before its future completes, so a caller may refill. */
        @Override
        public void run() {
            if (future.isDone()) { // cancelled by the caller
                release();
                return;
            }
            Object outcome;
            try {
                outcome = sender.send(eventType, body, key, startNanos);
            } catch (PublishException | RuntimeException e) {
                outcome = e;
            } finally {
                release();
            }
            if (outcome instanceof Throwable failure) {
                future.completeExceptionally(failure);
            } else {
                future.complete((Long) outcome);
            }
        }

        void abandon() {
            release();
            future.completeExceptionally(PublishException.notSent(EventPublisher.PUBLISH + " of " + eventType
                    + " abandoned: the publisher was closed before the event could be sent", null));
        }

        private void release() {
            synchronized (lock) {
                queuedBytes -= body.length;
            }
        }
    }
}

package eu.arrowhead.eventhandler.publisher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events of {@link EventPublisher#publishAsync publishAsync} and the one thread that publishes them, one
 * request at a time in the order they came: an event being retried holds back those behind it, so order holds
 * while the server is away. With batching on, the event whose turn it is takes those queued behind it along
 * in one batch request. Bounded by the bytes of the queued bodies, those being sent included. Thread-safe.
 */
final class PublishQueue {
    private static final Logger LOG = LoggerFactory.getLogger(PublishQueue.class);
    /** The server's default {@code publish.max-batch-events}. */
    static final int MAX_BATCH_EVENTS = 1000;
    /** The server's default {@code publish.max-request-bytes}. */
    static final long MAX_BATCH_BYTES = 1L << 20;
    private static final AtomicInteger THREADS = new AtomicInteger();

    /** Publishes queued events, with retries. */
    interface Sender {
        /**
         * Publishes one event and returns its id.
         *
         * @param startNanos when the event was queued: its deadline counts from it
         */
        long send(String eventType, byte[] body, String key, long startNanos) throws PublishException;

        /**
         * Publishes events, each encoded as a JSON object, in one batch request and returns their ids, in order.
         *
         * @param startNanos when the first was queued: the batch's deadline counts from it
         * @throws BatchRefused if the server stored none of them and may take them one at a time
         */
        List<Long> sendBatch(List<byte[]> bodies, long startNanos) throws PublishException, BatchRefused;
    }

    private final long maxBytes;
    private final Sender sender;
    /**
     * How many events one request may carry: the setting, halved whenever the server finds a batch too large, 1
     * once it showed it has no batch endpoint. Read and written by the worker only.
     */
    private int maxBatchEvents;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}; started by the first event. */
    private ThreadPoolExecutor thread;
    /** The thread of {@link #thread}, once started. */
    private volatile Thread worker;
    /** Guarded by {@link #lock}. */
    private boolean closed;
    /** The bodies of the events not yet done; guarded by {@link #lock}. */
    private long queuedBytes;

    /**
     * @param maxBatchEvents how many queued events one request may carry; 1 sends each alone
     */
    PublishQueue(long maxBytes, int maxBatchEvents, Sender sender) {
        this.maxBytes = maxBytes;
        this.maxBatchEvents = maxBatchEvents;
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
                return CompletableFuture.failedFuture(PublishException.queueFull(NodePublisher.PUBLISH + " of "
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

    /**
     * The first event and those queued behind it that one batch request may carry with it, taken from the queue;
     * called by the worker. Only {@link #close} takes events from the queue too, and only after the last
     * {@link #submit}: the event looked at is the one taken, or the queue was emptied.
     */
    private List<Queued> batchStartingWith(Queued first) {
        BlockingQueue<Runnable> waiting;
        synchronized (lock) {
            waiting = thread.getQueue();
        }
        List<Queued> batch = new ArrayList<>();
        batch.add(first);
        long bytes = first.body.length + 2; // the brackets of the JSON array
        while (batch.size() < maxBatchEvents && waiting.peek() instanceof Queued next
                && bytes + 1 + next.body.length <= MAX_BATCH_BYTES) {
            if (!(waiting.poll() instanceof Queued taken)) {
                break;
            }
            if (taken.withdrawn()) {
                continue;
            }
            batch.add(taken);
            bytes += 1 + taken.body.length;
        }
        return batch;
    }

    /**
     * Publishes the events in one request. A batch the server refused without storing any of it is sent again one
     * event at a time, so that only the events it refuses fail.
     */
    private void publishTogether(List<Queued> batch) {
        List<byte[]> bodies = new ArrayList<>(batch.size());
        for (Queued event : batch) {
            bodies.add(event.body);
        }
        List<Long> ids = null;
        Exception failure = null;
        try {
            ids = sender.sendBatch(bodies, batch.get(0).startNanos);
        } catch (BatchRefused refused) {
            adjustTo(refused, batch.size());
            for (Queued event : batch) {
                if (!event.withdrawn()) {
                    event.publishAlone();
                }
            }
            return;
        } catch (PublishException | RuntimeException e) {
            failure = e;
        }
        for (Queued event : batch) {
            event.release();
        }
        for (int i = 0; i < batch.size(); i++) {
            if (failure == null) {
                batch.get(i).future.complete(ids.get(i));
            } else {
                batch.get(i).future.completeExceptionally(failure);
            }
        }
    }

    /** Sends smaller batches, or none, after a refusal that says the server takes no batch this large, or none. */
    private void adjustTo(BatchRefused refused, int batchSize) {
        int before = maxBatchEvents;
        switch (refused.reason()) {
            case NO_BATCH_ENDPOINT -> maxBatchEvents = 1;
            case TOO_LARGE -> maxBatchEvents = Math.min(maxBatchEvents, Math.max(1, batchSize / 2));
            case AN_EVENT_REFUSED -> LOG.debug("a batch of {} events was refused; sending them one at a time: {}",
                    batchSize, refused.getMessage());
        }
        if (maxBatchEvents != before) {
            LOG.info("publishAsync sends {} from now on: {}", maxBatchEvents == 1 ? "one event a request"
                    : "at most " + maxBatchEvents + " events a request", refused.getMessage());
        }
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

        /** Publishes the event, with those queued behind it when batching is on. */
        @Override
        public void run() {
            if (withdrawn()) {
                return;
            }
            if (maxBatchEvents == 1) { // the default: nothing to gather
                publishAlone();
                return;
            }
            List<Queued> batch = batchStartingWith(this);
            if (batch.size() == 1) {
                publishAlone();
            } else {
                publishTogether(batch);
            }
        }

        /** Whether the caller cancelled its future; its bytes are given back then. */
        boolean withdrawn() {
            if (future.isDone()) {
                release();
                return true;
            }
            return false;
        }

        /** Its bytes are given back before its future completes, so a caller may refill the queue at once. */
        private void publishAlone() {
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
            future.completeExceptionally(PublishException.notSent(NodePublisher.PUBLISH + " of " + eventType
                    + " abandoned: the publisher was closed before the event could be sent", null));
        }

        private void release() {
            synchronized (lock) {
                queuedBytes -= body.length;
            }
        }
    }
}

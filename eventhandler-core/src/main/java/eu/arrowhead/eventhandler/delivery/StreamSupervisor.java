package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.config.SubscriberLimits;
import eu.arrowhead.eventhandler.protocol.SseFrames;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.ObjIntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the open SSE streams in check: admits at most {@code subscriber.max-count}, holds the budget of
 * their queues ({@link QueueBudget}), sends heartbeats to idle streams, cuts off streams whose socket
 * stopped accepting bytes, and at shutdown lets every stream write what it holds before ending it. One
 * scheduled tick does all of it, whatever the number of streams.
 */
public final class StreamSupervisor {
    private static final Logger LOG = LoggerFactory.getLogger(StreamSupervisor.class);
    static final PublishedEvent HEARTBEAT = PublishedEvent.control(SseFrames.heartbeat());

    private final Hub hub;
    private final int maxStreams;
    private final long streamsHeapBytes;
    private final QueueBudget queueBudget;
    private final long heartbeatNanos;
    private final long writeTimeoutNanos;
    private final ObjIntConsumer<DisconnectReason> disconnects;
    private final Set<SubscriberQueue> streams = ConcurrentHashMap.newKeySet();
    private final AtomicInteger reserved = new AtomicInteger();
    private final AtomicLong charged = new AtomicLong();

    /**
     * @param limits      {@code subscriber.max-count} and the bytes their queues may hold
     * @param disconnects told of every ended stream with its reason and the events it dropped
     */
    public StreamSupervisor(Hub hub, SubscriberLimits limits, Duration heartbeat, Duration writeTimeout,
                            ObjIntConsumer<DisconnectReason> disconnects) {
        this.hub = hub;
        this.maxStreams = limits.maxCount();
        this.streamsHeapBytes = limits.streamsHeapBytes();
        this.queueBudget = new QueueBudget(limits.queueMaxBytes(), limits.totalQueueMaxBytes(), limits.maxCount());
        this.heartbeatNanos = heartbeat.toNanos();
        this.writeTimeoutNanos = writeTimeout.toNanos();
        this.disconnects = disconnects;
    }

    /**
     * Takes one of the {@code subscriber.max-count} places for a new stream, charges its heap ({@link StreamHeap})
     * to the subscribers' share of the heap, and lets {@code open} make the stream with that charge. From then
     * on the stream is known here, and gives its place back when it closes: a refusal may come from another
     * thread as soon as it is known, so {@code open} readies its response first. Should {@code open} fail,
     * there is no stream to close, and the place is given back here.
     *
     * @throws UnavailableException if the places or the heap share are used up
     */
    SubscriberQueue admit(long heapCharge, LongFunction<SubscriberQueue> open) {
        if (!reserve(heapCharge)) {
            throw new UnavailableException(limitReached());
        }
        SubscriberQueue stream;
        try {
            stream = open.apply(heapCharge);
        } catch (RuntimeException | Error e) {
            release(heapCharge);
            throw e;
        }
        streams.add(stream);
        return stream;
    }

    /** Takes a place and the heap charge, or returns false if either is used up. */
    private boolean reserve(long heapCharge) {
        if (reserved.incrementAndGet() > maxStreams) {
            reserved.decrementAndGet();
            return false;
        }
        if (charged.addAndGet(heapCharge) > streamsHeapBytes) {
            charged.addAndGet(-heapCharge);
            reserved.decrementAndGet();
            return false;
        }
        return true;
    }

    /**
     * Gives back a stream's place and its heap charge once it has closed, or failed to open: a stream is known
     * here from before it is registered, so a refused one comes through {@link #closed} too.
     */
    private void release(long heapCharge) {
        charged.addAndGet(-heapCharge);
        reserved.decrementAndGet();
    }

    /** Why a stream was refused its place: for the refusal's message. */
    private String limitReached() {
        return "the Event Handler already serves as many subscribers as it can hold (subscriber.max-count: "
                + maxStreams + ", or their share of the heap: " + (streamsHeapBytes >> 20) + " MiB); try again later";
    }

    /** {@code subscriber.max-count}. */
    public int maxStreams() {
        return maxStreams;
    }

    QueueBudget queueBudget() {
        return queueBudget;
    }

    /** The {@link SubscriberQueue.ClosedListener} of every stream. */
    void closed(SubscriberQueue stream, DisconnectReason reason, int dropped) {
        hub.unsubscribe(stream.topicKeys(), stream);
        if (streams.remove(stream)) {
            release(stream.heapCharge());
            if (streams.isEmpty()) {
                synchronized (this) {
                    notifyAll();
                }
            }
        }
        disconnects.accept(reason, dropped);
        if (LOG.isDebugEnabled()) {
            LOG.debug("stream of {} closed: {}, {} events dropped", stream.topicKeys(), reason.label(), dropped);
        }
    }

    /** Heartbeats and write timeouts; called every second. */
    public void tick() {
        tick(System.nanoTime());
    }

    /** {@link #tick()} as of {@code now}: the tests' clock moves past a timeout instead of waiting it out. */
    void tick(long now) {
        for (SubscriberQueue stream : streams) {
            if (stream.blockedLongerThan(now, writeTimeoutNanos)) {
                stream.close(DisconnectReason.WRITE_TIMEOUT);
            } else {
                stream.heartbeatIfIdle(HEARTBEAT, now, heartbeatNanos);
            }
        }
    }

    /**
     * The streams known now, from the moment {@link #admit} returns them until they close: what an
     * authorization update decides again ({@link StreamAuthorization}).
     */
    List<SubscriberQueue> streams() {
        return List.copyOf(streams);
    }

    /** Open streams now. */
    public int openStreams() {
        return streams.size();
    }

    /** The heap the open streams are charged for ({@link StreamHeap}). */
    public long streamsHeapCharged() {
        return charged.get();
    }

    /**
     * Bytes of frames all subscriber queues hold now, the most they have held together since the start,
     * and the most one queue has held.
     */
    public long[] queuedBytes() {
        return new long[] {queueBudget.queued(), queueBudget.peakTotal(), queueBudget.peakQueue()};
    }

    /** Events waiting in all subscriber queues, and the longest queue. */
    public long[] queueDepths() {
        long total = 0;
        long max = 0;
        for (SubscriberQueue stream : streams) {
            int depth = stream.queued();
            total += depth;
            max = Math.max(max, depth);
        }
        return new long[] {total, max};
    }

    /**
     * Ends every open stream now, without writing what its queue holds: its client resumes with its
     * {@code Last-Event-ID} (cluster mode, on another node), so nothing it did not receive is lost.
     */
    public void endAll(DisconnectReason reason) {
        streams.forEach(stream -> stream.close(reason));
    }

    /**
     * Lets every stream write what it holds and end cleanly, then cuts off whatever is left at the
     * deadline. The hub must be closed first, so that nothing new arrives.
     *
     * @return whether every stream ended cleanly in time
     */
    public boolean shutdown(Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        streams.forEach(SubscriberQueue::finish);
        synchronized (this) {
            long left;
            while (!streams.isEmpty() && (left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
        boolean clean = streams.isEmpty();
        if (!clean) {
            LOG.warn("{} streams still had events to write after {} s; cutting them off", streams.size(),
                    TimeUnit.NANOSECONDS.toSeconds(grace.toNanos()));
            streams.forEach(stream -> stream.close(DisconnectReason.SHUTDOWN));
        }
        return clean;
    }
}

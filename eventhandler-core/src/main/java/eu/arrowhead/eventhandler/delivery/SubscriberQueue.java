package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.protocol.SseFrames;
import eu.arrowhead.eventhandler.topic.Publication;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Subscriber;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * One SSE subscriber: a queue of events bounded in bytes ({@link FrameQueue}) and the non-blocking writer
 * that empties it into the subscriber's socket.
 *
 * <p>Why it looks like this:
 * <ul>
 * <li>{@link #offer} runs under the hub's lock for every matching event, so it only enqueues a reference
 *     to the shared frame and, at most once per burst, schedules a drain: on the writer pool, or on the
 *     publishing thread once it has released the lock ({@link PublisherWrites}).</li>
 * <li>A drain writes only while Grizzly says the socket can take more ({@code canWrite} before every
 *     write makes the write non-blocking); otherwise it parks a write handler and frees the thread. A
 *     stalled client therefore costs no thread, only its bounded queue.</li>
 * <li>A queue that may not grow ({@link QueueBudget#admits}) means the subscriber has fallen too far
 *     behind: it is cut off at once, and resumes with {@code Last-Event-ID}, instead of slowing the topic
 *     or growing the heap. A subscriber that is only briefly behind (descheduled, a garbage collection)
 *     catches up from its queue, which may hold megabytes of frames. Before the stream has started (its
 *     replay is still being read from the event store) nothing has been written yet, so it is answered
 *     with the {@link StreamRefusal} instead: a client must never be left without an answer.</li>
 * <li>Grizzly recycles a response when its connection closes, so every use of the {@link StreamPort} happens
 *     under this object's monitor after checking {@code closed}, and closing takes the same monitor.</li>
 * <li>The publishers it may receive from can change while it is open ({@link #authorize}, after an
 *     authorization update). The hub reads the new filter for every event it offers from then on; what was
 *     queued (or read for a replay) under the old one is checked again as it is written, so that nothing
 *     from a revoked publisher is written after the change, and nothing else is lost.</li>
 * </ul>
 */
public final class SubscriberQueue implements Subscriber {
    /** Frames written per drain before the writer thread moves on to other subscribers. */
    private static final int MAX_FRAMES_PER_DRAIN = 256;

    /** Told once when the stream has ended, whatever the reason. */
    public interface ClosedListener {
        void closed(SubscriberQueue subscriber, DisconnectReason reason, int droppedEvents);
    }

    private final Set<String> topicKeys;
    private final StreamRequest request;
    /** Read by the hub for every event it offers; replaced by {@link #authorize}. */
    private volatile SubscriberFilter filter;
    /** The generation of the authorization rules {@link #filter} was decided in ({@link StreamAuthorization}); under the monitor. */
    private long authorizedIn;
    /**
     * Set once the filter has changed: events queued before may no longer pass, so each is checked as it is
     * written. Never set for a stream whose rules never change, which then pays nothing.
     */
    private volatile boolean recheck;
    /** Why the stream ends once {@link #finishing} has written what it holds. */
    private volatile DisconnectReason endReason = DisconnectReason.SHUTDOWN;
    private final StreamPort port;
    private final long heapCharge;
    private final FrameQueue queue;
    private final Executor writers;
    private final ClosedListener closedListener;
    private final StreamRefusal refusal;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** A drain left to the publishing thread (see {@link PublisherWrites}). */
    private final Runnable drainOnPublisher = this::drain;
    private final AtomicBoolean closeRequested = new AtomicBoolean();
    private final StreamPort.Listener portEvents = new StreamPort.Listener() {
        @Override
        public void writable() {
            writers.execute(SubscriberQueue.this::drain);
        }

        @Override
        public void failed(Throwable cause) {
            close(DisconnectReason.WRITE_FAILED);
        }

        @Override
        public void clientClosed() {
            close(DisconnectReason.CLIENT_CLOSED);
        }
    };

    /**
     * Frames sent before the queue: the opening comment, a gap notice, the replay; emptied once written.
     * Under the monitor.
     */
    private List<PublishedEvent> preamble = List.of();
    private int preambleNext;
    /** Set under the monitor: from then on frames may have been written, and a refusal is too late. */
    private volatile boolean started;
    /**
     * Set under the monitor once the headers and the opening are out ahead of the start ({@link #openAhead}):
     * a refusal is then written as frames into the open stream.
     */
    private boolean openedAhead;
    private volatile boolean finishing;
    /** The stream carries one page of the event log and ends: live events are not wanted. */
    private volatile boolean pageOnly;
    /** Events up to this id the subscriber has from another node ({@link #hasUpTo}); written and read under the hub's lock. */
    private long hasUpTo;
    /** The subscriber is authorized for none of its sources any more: no event is written, and the stream ends. */
    private volatile boolean revoked;
    private boolean closed;
    private volatile long blockedSinceNanos;
    private volatile long lastWriteNanos = System.nanoTime();

    /**
     * @param request      what the stream asked for, from which its filter is decided again after an
     *                     authorization update
     * @param filter       the filter decided at the open
     * @param authorizedIn the generation of the rules {@code filter} was decided in
     * @param port         the client's connection, its response readied but not written
     * @param heapCharge   what the supervisor charged for this stream's heap ({@link StreamHeap}), given back
     *                     when it closes
     */
    SubscriberQueue(Set<String> topicKeys, StreamRequest request, SubscriberFilter filter, long authorizedIn,
                    StreamPort port, long heapCharge, QueueBudget budget, Executor writers,
                    ClosedListener closedListener, StreamRefusal refusal) {
        this.topicKeys = Set.copyOf(topicKeys);
        this.request = request;
        this.filter = filter;
        this.authorizedIn = authorizedIn;
        this.port = port;
        this.heapCharge = heapCharge;
        this.queue = new FrameQueue(budget);
        this.writers = writers;
        this.closedListener = closedListener;
        this.refusal = refusal;
        port.bind(portEvents);
    }

    Set<String> topicKeys() {
        return topicKeys;
    }

    long heapCharge() {
        return heapCharge;
    }

    StreamRequest request() {
        return request;
    }

    @Override
    public SubscriberFilter filter() {
        return filter;
    }

    /**
     * Puts the publishers an authorization update decided in effect ({@link StreamAuthorization}). Events the
     * hub offers from now on pass the new filter; events queued before that no longer pass it are skipped when
     * their turn to be written comes. Taking the monitor waits for a write in progress, so once this returns no
     * event the new filter refuses is written any more. With no publisher left the stream writes what else it
     * holds (heartbeats and notices), a comment that says why, and ends: its client reconnects and is refused
     * with the reason, as a new stream would be.
     *
     * @param changed    the new filter; {@code null} when the subscriber is authorized for none of its sources
     * @param generation the generation of the rules it was decided in; an older one than the filter in effect
     *                   is ignored
     */
    void authorize(SubscriberFilter changed, long generation) {
        synchronized (this) {
            if (closed || generation <= authorizedIn) {
                return;
            }
            authorizedIn = generation;
            if (changed != null) {
                if (!changed.equals(filter)) {
                    recheck = true;
                    filter = changed;
                }
                return;
            }
            recheck = true;
            revoked = true;
            endReason = DisconnectReason.UNAUTHORIZED;
            finishing = true;
            queue.offer(PublishedEvent.control(SseFrames.comment(request.unauthorized() + "; the stream ends")));
        }
        schedule();
    }

    @Override
    public void hasUpTo(long id) {
        hasUpTo = id;
    }

    @Override
    public void offer(PublishedEvent event, Publication publication) {
        // Control frames (heartbeats, notices) have id 0: only events the subscriber has are dropped.
        if (closeRequested.get() || pageOnly || revoked || event.id() > 0 && event.id() <= hasUpTo) {
            return;
        }
        if (!queue.offer(event)) {
            event.dropped();
            // Not closed inline: we are inside the hub's broadcast loop, which closing would modify.
            if (started) {
                closeLater(DisconnectReason.SLOW);
            } else {
                refuseLater("events arrived faster than the event store could replay the older ones for this"
                        + " resume; resume again later");
            }
            return;
        }
        if (publication.blocking()) {
            long timeoutNanos = publication.blockingWriteTimeoutNanos();
            publication.afterHubLock(() -> writeQueuedBlocking(timeoutNanos));
            return;
        }
        schedule(publication);
    }

    /**
     * Starts writing: the opening frames first, then the replay, then what {@link #offer} has queued
     * since the subscriber was registered. Does nothing if the stream was refused or closed before.
     *
     * @param gapNotice sent after the opening, or {@code null}
     */
    void start(PublishedEvent opening, PublishedEvent gapNotice, List<PublishedEvent> replay) {
        List<PublishedEvent> frames = new ArrayList<>(replay.size() + 2);
        frames.add(opening);
        if (gapNotice != null) {
            frames.add(gapNotice);
        }
        frames.addAll(replay);
        boolean listening;
        synchronized (this) {
            if (closeRequested.get()) {
                return;
            }
            listening = openedAhead;
            preamble = openedAhead ? frames.subList(1, frames.size()) : frames;
            started = true;
        }
        if (!listening) {
            port.watchClose();
        }
        schedule();
    }

    /**
     * Writes the headers and the opening of a stream whose replay waits for an event store reader: its client
     * knows at once that it is served, and {@link #heartbeatIfIdle} keeps its read timeout from firing until
     * {@link #start}, which then does not send the opening again. Never blocks: with no room in the socket,
     * the opening waits for the start. A client that leaves meanwhile gives its place back at once.
     */
    void openAhead(PublishedEvent opening) {
        synchronized (this) {
            if (closed || started || openedAhead || !writeAhead(opening)) {
                return;
            }
            openedAhead = true;
            port.headersWritten();
            // Under the monitor, so that a refusal or an end that follows finds it to remove.
            port.watchClose();
        }
    }

    /** Under the monitor, before the start: one frame if the socket has room for it now. */
    private boolean writeAhead(PublishedEvent frame) {
        try {
            if (!port.canWrite()) {
                return false;
            }
            port.write(frame.frame());
            port.flush();
        } catch (IOException | RuntimeException e) {
            closeLater(DisconnectReason.WRITE_FAILED);
            return false;
        }
        lastWriteNanos = System.nanoTime();
        return true;
    }

    /**
     * Starts a stream that carries one page of the event log and then ends cleanly, without live events:
     * the client resumes after {@code resumeFrame}'s id for the next page.
     */
    void startPage(PublishedEvent opening, PublishedEvent gapNotice, List<PublishedEvent> page,
                   PublishedEvent resumeFrame) {
        pageOnly = true;
        queue.clear();
        finishing = true;
        List<PublishedEvent> frames = new ArrayList<>(page);
        frames.add(resumeFrame);
        start(opening, gapNotice, frames);
    }

    /**
     * Answers with the {@link StreamRefusal} instead of starting the stream: the client comes back later.
     * Called instead of {@link #start}.
     */
    void refuse(String message) {
        refuseBeforeStart(message);
    }

    /**
     * The refusal, if the stream has not started: nothing has been written then.
     *
     * @return false if the stream had started or ended already, and nothing was done
     */
    private boolean refuseBeforeStart(String message) {
        synchronized (this) {
            if (closed || started) {
                return false;
            }
            closeRequested.set(true);
            closed = true;
            try {
                if (!openedAhead) {
                    port.refuse(refusal, message);
                } else if (port.canWrite()) {
                    port.unwatchClose();
                    port.write(refusal.frames(EventStreamHandler.PATH, message));
                    port.end();
                } else {
                    // Its client reads nothing: ending the response would wait for it, under this monitor.
                    port.terminate();
                }
            } catch (IOException | RuntimeException e) {
                port.terminate();
            }
        }
        queue.close(false);
        closedListener.closed(this, DisconnectReason.REFUSED, 0);
        return true;
    }

    /** {@link #refuseBeforeStart} off the hub's lock; a stream that started meanwhile is cut off as slow. */
    private void refuseLater(String message) {
        if (closeRequested.compareAndSet(false, true)) {
            writers.execute(() -> {
                if (!refuseBeforeStart(message)) {
                    close(DisconnectReason.SLOW);
                }
            });
        }
    }

    /** Whether the client is still connected: a resume whose client has gone is not read for. */
    boolean clientConnected() {
        return port.isOpen();
    }

    /** Whether the stream is being refused or closed: whoever began that ends it; a replay is not read for it. */
    boolean closing() {
        return closeRequested.get();
    }

    /**
     * Queues a heartbeat comment if nothing has been written for {@code idleNanos}; before the start, writes it
     * ahead of the queue if the stream is {@linkplain #openAhead open} (a stream not open yet has nothing to
     * keep alive: its client is still waiting for the headers).
     */
    void heartbeatIfIdle(PublishedEvent heartbeat, long nowNanos, long idleNanos) {
        if (nowNanos - lastWriteNanos < idleNanos) {
            return;
        }
        if (!started) {
            synchronized (this) {
                if (openedAhead && !closed && !started) {
                    writeAhead(heartbeat);
                }
            }
        } else if (queue.isEmpty()) {
            offer(heartbeat, Publication.NONE);
        }
    }

    /** Whether the socket has accepted nothing for longer than {@code timeoutNanos}. */
    boolean blockedLongerThan(long nowNanos, long timeoutNanos) {
        long since = blockedSinceNanos;
        return since != 0 && nowNanos - since > timeoutNanos;
    }

    int queued() {
        return queue.size();
    }

    long queuedBytes() {
        return queue.bytes();
    }

    /**
     * Writes what is queued, then ends the response cleanly; used at shutdown. A stream still waiting for its
     * replay is refused instead: the client resumes from another server, or this one once it is back.
     */
    void finish() {
        if (refuseBeforeStart("the Event Handler is shutting down; resume again later")) {
            return;
        }
        finishing = true;
        schedule();
    }

    private void schedule() {
        schedule(Publication.NONE);
    }

    /** Schedules a drain: on the publishing thread after the hub's lock, or outside a publish on a writer. */
    private void schedule(Publication publication) {
        if (started && scheduled.compareAndSet(false, true)) {
            if (publication.defers()) {
                publication.afterHubLock(drainOnPublisher);
            } else {
                writers.execute(this::drain);
            }
        }
    }

    /**
     * {@code subscriber.write-mode=publisher-thread}: writes what is queued on the publishing thread, waiting
     * up to {@code timeoutNanos} for the socket to take each frame, and disconnects the subscriber
     * ({@code WRITE_TIMEOUT}) when it does not, unless the stream is being closed already (for whatever reason its
     * closer gives). A stream whose opening frames are not written yet is left to its writer, which sends them
     * first.
     */
    private void writeQueuedBlocking(long timeoutNanos) {
        boolean stalled = false;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!started || preambleNext < preamble.size()) {
                schedule();
                return;
            }
            try {
                for (PublishedEvent next; !stalled && (next = pollQueue()) != null; ) {
                    stalled = !awaitCanWrite(System.nanoTime() + timeoutNanos);
                    if (stalled) {
                        next.dropped();
                    } else {
                        write(next);
                        port.flush();
                        lastWriteNanos = System.nanoTime();
                    }
                }
            } catch (IOException | RuntimeException e) {
                closeLater(DisconnectReason.WRITE_FAILED);
                return;
            }
        }
        if (stalled && !closeRequested.get()) {
            close(DisconnectReason.WRITE_TIMEOUT);
        }
    }

    /**
     * Polls, because a write handler may already be registered by the writer (Grizzly takes one at a
     * time); this mode is only an ablation, and a stalled socket costs it a wake-up per millisecond.
     * Gives up when the stream is being closed: its closer waits for the monitor this thread holds, and when
     * the client went away that closer is a selector thread, every connection of which would wait with it
     * for the whole write timeout.
     *
     * @return false if the socket took nothing before the deadline, or the stream is being closed
     */
    private boolean awaitCanWrite(long deadlineNanos) {
        while (!port.canWrite()) {
            if (closeRequested.get() || System.nanoTime() - deadlineNanos >= 0) {
                return false;
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    private void drain() {
        boolean more;
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                int written = 0;
                PublishedEvent next = null;
                while (written < MAX_FRAMES_PER_DRAIN && port.canWrite() && (next = poll()) != null) {
                    write(next);
                    written++;
                }
                if (written > 0) {
                    port.flush();
                    lastWriteNanos = System.nanoTime();
                    if (preambleNext > 0 && preambleNext == preamble.size()) {
                        // The headers and the opening frames are out: what only they needed can go.
                        preamble = List.of();
                        preambleNext = 0;
                        port.headersWritten();
                    }
                }
                more = hasNext();
                // Ending the response writes its last chunk, which Grizzly would block on if the socket
                // were full: that waits for room like any other write.
                if ((more || finishing) && !port.canWrite()) {
                    blockedSinceNanos = System.nanoTime();
                    port.notifyCanWrite();
                    return;
                }
                blockedSinceNanos = 0;
                if (!more && finishing) {
                    endCleanly();
                    return;
                }
            } catch (IOException | RuntimeException e) {
                closeLater(DisconnectReason.WRITE_FAILED);
                return;
            }
        }
        if (more) {
            writers.execute(this::drain);
            return;
        }
        scheduled.set(false);
        // An offer or finish() between our last look and the line above saw 'scheduled' still set and
        // left the work to us: look again.
        if (hasNext() || finishing) {
            schedule();
        }
    }

    /**
     * Writes a frame taken from the queue, counted as delivered; one the connection refuses is counted as dropped,
     * like those still queued behind it when the stream is then cut off. Under the monitor.
     */
    private void write(PublishedEvent frame) throws IOException {
        try {
            port.write(frame.frame());
        } catch (IOException | RuntimeException e) {
            frame.dropped();
            throw e;
        }
        frame.delivered();
    }

    /** The next frame to write, the preamble's first; under the monitor. */
    private PublishedEvent poll() {
        while (preambleNext < preamble.size()) {
            PublishedEvent next = preamble.get(preambleNext++);
            if (passes(next)) {
                return next;
            }
        }
        return pageOnly ? null : pollQueue();
    }

    /** The next queued frame to write; under the monitor. */
    private PublishedEvent pollQueue() {
        PublishedEvent next;
        do {
            next = queue.poll();
        } while (next != null && !passes(next));
        return next;
    }

    /**
     * Whether a frame may still be written: control frames always; an event, once the filter has changed
     * ({@link #authorize}), only if the filter in effect lets it through. A skipped event is not counted as
     * dropped: the subscriber was not meant to have it.
     */
    private boolean passes(PublishedEvent frame) {
        return !recheck || frame.id() == 0 || (!revoked && filter.matches(frame));
    }

    private boolean hasNext() {
        return preambleNext < preamble.size() || (!pageOnly && !queue.isEmpty());
    }

    /** Called under the monitor with nothing left to write. */
    private void endCleanly() {
        closed = true;
        port.unwatchClose();
        port.end();
        queue.close(false);
        closedListener.closed(this, pageOnly ? DisconnectReason.REPLAY_PAGE : endReason, 0);
    }

    private void closeLater(DisconnectReason reason) {
        if (closeRequested.compareAndSet(false, true)) {
            writers.execute(() -> close(reason));
        }
    }

    /** Ends the stream at once: the connection is cut and whatever was queued is counted as dropped. */
    void close(DisconnectReason reason) {
        closeRequested.set(true);
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (reason != DisconnectReason.CLIENT_CLOSED) {
                // terminate, not close: a graceful close would wait for a stalled client to read.
                port.terminate();
            }
        }
        int dropped = queue.close(true);
        closedListener.closed(this, reason, dropped);
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.publisher.EventPublisher;
import eu.arrowhead.eventhandler.publisher.PublishException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * Publishers on threads of their own, each with the publisher client library over every node (each starting on
 * another node), publishing events one after another (a given number, or at a steady pace until stopped) and
 * keeping the ids the cluster acknowledged and how long each publish took.
 */
final class PublishLoad implements AutoCloseable {
    private final List<Long> acknowledged = Collections.synchronizedList(new ArrayList<>());
    private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    private final List<Thread> threads = new ArrayList<>();
    private final List<EventPublisher> publishers = new ArrayList<>();
    /** Per acknowledged publish: when it was called and when it returned ({@link System#nanoTime}). */
    private final List<long[]> calls = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch reached;
    private volatile boolean stopping;

    /**
     * @param nodesFor   the node list of publisher i
     * @param reachedAt  {@link #awaitAcknowledged} returns once this many events are acknowledged in all
     */
    PublishLoad(int publisherCount, int eventsEach, String eventType, IntFunction<List<URI>> nodesFor,
                int reachedAt) {
        this(publisherCount, eventsEach, Duration.ZERO, eventType, nodesFor, reachedAt);
    }

    /** Publishers that publish one event per {@code pace} each until {@link #stop}. */
    static PublishLoad untilStopped(int publisherCount, Duration pace, String eventType,
                                    IntFunction<List<URI>> nodesFor, int reachedAt) {
        return new PublishLoad(publisherCount, Integer.MAX_VALUE, pace, eventType, nodesFor, reachedAt);
    }

    private PublishLoad(int publisherCount, int eventsEach, Duration pace, String eventType,
                        IntFunction<List<URI>> nodesFor, int reachedAt) {
        this.reached = new CountDownLatch(reachedAt);
        for (int p = 0; p < publisherCount; p++) {
            // The library's defaults, as an application has them: its deadline (60 s) outlasts a node's death
            // and a stream leader's election.
            EventPublisher publisher = EventPublisher.builder(nodesFor.apply(p)).build();
            publishers.add(publisher);
            int which = p;
            Thread thread = new Thread(() -> {
                for (int i = 0; i < eventsEach && !stopping; i++) {
                    long called = System.nanoTime();
                    try {
                        acknowledged.add(publisher.publish(EventPublishRequest.of(eventType, "p" + which + "-" + i)));
                        calls.add(new long[] {called, System.nanoTime()});
                        reached.countDown();
                    } catch (PublishException | RuntimeException e) {
                        failures.add(e);
                    }
                    // A steady rate, not a synchronisation: the load spans the faults with few events.
                    LockSupport.parkNanos(pace.toNanos());
                }
            }, "publisher-" + p);
            threads.add(thread);
        }
    }

    void start() {
        threads.forEach(Thread::start);
    }

    boolean awaitAcknowledged(Duration timeout) throws InterruptedException {
        return reached.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Ends the publishing of a load made by {@link #untilStopped}; each publisher finishes the publish it is in. */
    void stop() {
        stopping = true;
    }

    /** The longest of the publishes that returned after {@code sinceNanos} and began before {@code untilNanos}. */
    Duration longestPublishBetween(long sinceNanos, long untilNanos) {
        long longest = 0;
        synchronized (calls) {
            for (long[] call : calls) {
                if (call[1] > sinceNanos && call[0] < untilNanos) {
                    longest = Math.max(longest, call[1] - call[0]);
                }
            }
        }
        return Duration.ofNanos(longest);
    }

    /** Waits until every publisher has published all its events (or, stopped, its last one). */
    void awaitDone(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (thread.isAlive()) {
                throw new AssertionError(thread.getName() + " did not finish within " + timeout);
            }
        }
    }

    List<Long> acknowledged() {
        synchronized (acknowledged) {
            return List.copyOf(acknowledged);
        }
    }

    List<Throwable> failures() {
        synchronized (failures) {
            return List.copyOf(failures);
        }
    }

    @Override
    public void close() {
        publishers.forEach(EventPublisher::close);
    }
}

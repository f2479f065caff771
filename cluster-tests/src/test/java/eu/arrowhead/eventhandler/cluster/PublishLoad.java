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
import java.util.function.IntFunction;

/**
 * Publishers on threads of their own, each with the publisher client library over every node (each starting on
 * another node), publishing events one after another and keeping the ids the cluster acknowledged.
 */
final class PublishLoad implements AutoCloseable {
    private final List<Long> acknowledged = Collections.synchronizedList(new ArrayList<>());
    private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    private final List<Thread> threads = new ArrayList<>();
    private final List<EventPublisher> publishers = new ArrayList<>();
    private final CountDownLatch reached;

    /**
     * @param nodesFor   the node list of publisher i
     * @param reachedAt  {@link #awaitAcknowledged} returns once this many events are acknowledged in all
     */
    PublishLoad(int publisherCount, int eventsEach, String eventType, IntFunction<List<URI>> nodesFor,
                int reachedAt) {
        this.reached = new CountDownLatch(reachedAt);
        for (int p = 0; p < publisherCount; p++) {
            // The library's defaults, as an application has them: its deadline (60 s) outlasts a node's death
            // and a stream leader's election.
            EventPublisher publisher = EventPublisher.builder(nodesFor.apply(p)).build();
            publishers.add(publisher);
            int which = p;
            Thread thread = new Thread(() -> {
                for (int i = 0; i < eventsEach; i++) {
                    try {
                        acknowledged.add(publisher.publish(EventPublishRequest.of(eventType, "p" + which + "-" + i)));
                        reached.countDown();
                    } catch (PublishException | RuntimeException e) {
                        failures.add(e);
                    }
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

    /** Waits until every publisher has published all its events. */
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

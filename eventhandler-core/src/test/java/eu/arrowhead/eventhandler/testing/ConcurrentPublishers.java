package eu.arrowhead.eventhandler.testing;

import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Threads that publish at once, each batches of one to three events of a random one of the event types, from the
 * moment they are started together with the test's thread (a barrier) until they have published as many batches as
 * the test allows ({@link #allow}; each batch holds at least one event) or are stopped. The allowance keeps them from
 * starving the test's thread, which waits for the hub's lock like them, and from filling the heap meanwhile.
 */
public final class ConcurrentPublishers {
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Semaphore batches;
    private final List<Future<?>> publishers = new ArrayList<>();

    private ConcurrentPublishers(int allowed) {
        this.batches = new Semaphore(allowed);
    }

    /**
     * Starts {@code count} publishers on {@code threads} and returns once they all go.
     *
     * @param allowed how many batches they may publish, together, before they wait for {@link #allow}
     * @param publish how one batch is published (the hub, or the publishing thread's whole path)
     */
    public static ConcurrentPublishers start(ExecutorService threads, int count, List<String> eventTypes, long seed,
                                             int allowed, Consumer<List<IncomingEvent>> publish) throws Exception {
        ConcurrentPublishers started = new ConcurrentPublishers(allowed);
        CyclicBarrier go = new CyclicBarrier(count + 1);
        for (int p = 0; p < count; p++) {
            Random random = new Random(seed + p);
            String label = "p" + p;
            started.publishers.add(threads.submit(() -> {
                go.await();
                for (int i = 0; started.next(); i++) {
                    publish.accept(SampleEvents.batch(eventTypes.get(random.nextInt(eventTypes.size())),
                            label + "-" + i, 1 + random.nextInt(3)));
                }
                return null;
            }));
        }
        go.await(30, TimeUnit.SECONDS);
        return started;
    }

    /** Lets them publish {@code more} batches: at least as many events. */
    public void allow(int more) {
        batches.release(more);
    }

    private boolean next() throws InterruptedException {
        batches.acquire();
        return !stop.get();
    }

    /** Stops them and waits until each has finished its last publish; a publish that failed fails here. */
    public void stop(Duration timeout) throws Exception {
        stop.set(true);
        batches.release(publishers.size());
        for (Future<?> publisher : publishers) {
            publisher.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}

package eu.arrowhead.eventhandler.subscriber;

import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.Await;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Both listeners of a subscription, recording every call, with waits on what it recorded. An optional
 * action runs on each event after it is recorded (to block, or to throw).
 */
class Recorder implements EventListener, SubscriptionListener {
    static final Duration DEADLINE = Duration.ofSeconds(30);

    final List<Event> events = Collections.synchronizedList(new ArrayList<>());
    final List<Throwable> disconnects = Collections.synchronizedList(new ArrayList<>());
    final List<Duration> reconnectDelays = Collections.synchronizedList(new ArrayList<>());
    final List<ReplayGap> gaps = Collections.synchronizedList(new ArrayList<>());
    final List<Event> listenerErrors = Collections.synchronizedList(new ArrayList<>());
    final List<Throwable> stopCauses = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger connects = new AtomicInteger();
    final AtomicInteger stops = new AtomicInteger();
    /** The thread the listeners were called on. */
    volatile Thread thread;
    private final Consumer<Event> action;

    Recorder() {
        this(event -> { });
    }

    Recorder(Consumer<Event> action) {
        this.action = action;
    }

    /** A builder for type {@code temperature} with both listeners set to this and a fast backoff. */
    EventSubscriber.Builder builder(URI baseUri) {
        return EventSubscriber.builder(baseUri)
                .eventTypes("temperature")
                .listener(this)
                .subscriptionListener(this)
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
    }

    @Override
    public void onEvent(Event event) {
        thread = Thread.currentThread();
        events.add(event);
        action.accept(event);
    }

    @Override
    public void onConnected() {
        thread = Thread.currentThread();
        connects.incrementAndGet();
    }

    @Override
    public void onDisconnected(Throwable cause, Duration reconnectIn) {
        thread = Thread.currentThread();
        reconnectDelays.add(reconnectIn);
        disconnects.add(cause);
    }

    @Override
    public void onReplayGap(ReplayGap gap) {
        gaps.add(gap);
    }

    @Override
    public void onListenerError(Event event, Throwable error) {
        listenerErrors.add(event);
    }

    @Override
    public void onStopped(Throwable cause) {
        thread = Thread.currentThread();
        stopCauses.add(cause);
        stops.incrementAndGet();
    }

    void awaitEvents(int count) throws InterruptedException {
        try {
            Await.until(count + " events", DEADLINE, () -> events.size() >= count);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; received " + events.size(), e);
        }
    }

    void awaitConnects(int count) throws InterruptedException {
        Await.until(count + " connections", DEADLINE, () -> connects.get() >= count);
    }

    void awaitDisconnects(int count) throws InterruptedException {
        Await.until(count + " disconnects", DEADLINE, () -> disconnects.size() >= count);
    }

    /** Waits until the subscription's thread has ended; fails if it does not. */
    void awaitThreadEnd() throws InterruptedException {
        Await.until("the subscription thread to end", DEADLINE, () -> thread != null && !thread.isAlive());
    }

    List<Long> ids() {
        synchronized (events) {
            return events.stream().map(Event::id).toList();
        }
    }

    List<String> payloads() {
        synchronized (events) {
            return events.stream().map(Event::payload).toList();
        }
    }

    /** Whether any live thread has this name. */
    static boolean threadRunning(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }
}

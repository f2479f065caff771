package eu.arrowhead.eventhandler.node;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The parts of a node that have started, each with how it stops, stopped in the reverse order of their start:
 * when a later part fails to start, and at shutdown. Each part is added as it starts (before, if a start that
 * fails halfway can leave something running), so a failed start leaves no thread behind, and the stop order is
 * the start order read backwards: a part stops while everything it uses still runs.
 *
 * <p>A part whose stop fails is logged, and the parts below it are stopped all the same.
 */
public final class StartedParts implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StartedParts.class);

    /** How a part stops. */
    @FunctionalInterface
    public interface Stop {
        void run() throws Exception;
    }

    private record Part(String name, Stop stop) {
    }

    private final Deque<Part> started = new ArrayDeque<>();
    private final Consumer<String> afterEach;

    /**
     * @param afterEach told the name of each part once it is added; it may throw, as the next step of a start
     *                  would (the tests fail a start after each part this way)
     */
    public StartedParts(Consumer<String> afterEach) {
        this.afterEach = afterEach;
    }

    /** Adds a part; {@code name} is what the log calls it should its stop fail. */
    public void add(String name, Stop stop) {
        synchronized (started) {
            started.push(new Part(name, stop));
        }
        afterEach.accept(name);
    }

    /** Stops every part, the last started first; once only (later calls find nothing left). */
    @Override
    public void close() {
        for (Part part = next(); part != null; part = next()) {
            try {
                part.stop().run();
            } catch (InterruptedException e) {
                // The stops after it still run, each not waiting where it would have waited.
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                LOG.warn("stopping the {} failed: {}", part.name(), e.toString());
            }
        }
    }

    private Part next() {
        synchronized (started) {
            return started.poll();
        }
    }
}

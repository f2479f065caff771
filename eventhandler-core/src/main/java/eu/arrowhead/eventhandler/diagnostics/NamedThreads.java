package eu.arrowhead.eventhandler.diagnostics;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Makes the server's threads, named {@code prefix-1}, {@code prefix-2}... so that a thread dump or
 * {@code docs/architecture.md}'s thread table tells what each one is.
 */
public final class NamedThreads implements ThreadFactory {
    private final String prefix;
    private final boolean daemon;
    private final AtomicInteger count = new AtomicInteger();

    private NamedThreads(String prefix, boolean daemon) {
        this.prefix = prefix;
        this.daemon = daemon;
    }

    /** Threads the JVM waits for at exit: those that must finish their work (the server stops them). */
    public static NamedThreads of(String prefix) {
        return new NamedThreads(prefix, false);
    }

    /** Threads that never hold up the JVM's exit: background work that may be cut off. */
    public static NamedThreads daemons(String prefix) {
        return new NamedThreads(prefix, true);
    }

    @Override
    public Thread newThread(Runnable runnable) {
        Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
        thread.setDaemon(daemon);
        return thread;
    }
}

package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.EventHandlerServer;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A server started in this JVM on a free port of 127.0.0.1: publisher and subscriber then read one clock,
 * and the server's threads and memory can be seen directly (they include the bench's own, which are few);
 * its CPU time is that of its own threads, whose names start with {@value #SERVER_THREAD_PREFIX}.
 */
final class InProcessTarget implements Target {
    private static final String SERVER_THREAD_PREFIX = "eh-";

    private final EventHandlerServer server;

    private InProcessTarget(EventHandlerServer server) {
        this.server = server;
    }

    /** Starts a server with the packed defaults, a free port of 127.0.0.1 and then {@code overrides}. */
    static InProcessTarget start(Map<String, String> overrides) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("server.host", "127.0.0.1");
        config.put("server.port", "0");
        config.putAll(overrides);
        try {
            return new InProcessTarget(EventHandlerServer.start(ConfigLoader.withOverrides(config)));
        } catch (IOException e) {
            throw new BenchException("cannot start the server: " + e, e);
        }
    }

    @Override
    public URI baseUri() {
        return server.baseUri();
    }

    @Override
    public ResourceSnapshot snapshot() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        // Depth 0: the names are all that is wanted, not a stack dump of every thread.
        long[] serverThreadIds = Arrays.stream(threads.getThreadInfo(threads.getAllThreadIds(), 0))
                .filter(Objects::nonNull).filter(info -> info.getThreadName().startsWith(SERVER_THREAD_PREFIX))
                .mapToLong(ThreadInfo::getThreadId).toArray();
        // A thread that ended in between answers -1.
        long cpuNanos = Arrays.stream(serverThreadIds).map(threads::getThreadCpuTime).filter(nanos -> nanos > 0).sum();
        ManagementFactory.getMemoryMXBean().gc();
        long heapUsed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        return new ResourceSnapshot((long) threads.getThreadCount(), (long) serverThreadIds.length,
                ProcStatus.read("self").rssBytes(), heapUsed, cpuNanos);
    }

    @Override
    public void close() {
        server.close();
    }
}

package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.glassfish.grizzly.ConnectionProbe;
import org.glassfish.grizzly.http.server.HttpHandler;
import org.glassfish.grizzly.http.server.HttpHandlerRegistration;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.http.server.NetworkListener;
import org.glassfish.grizzly.memory.PooledMemoryManager;
import org.glassfish.grizzly.nio.transport.TCPNIOTransport;
import org.glassfish.grizzly.ssl.SSLEngineConfigurator;
import org.glassfish.grizzly.strategies.SameThreadIOStrategy;
import org.glassfish.grizzly.threadpool.ThreadPoolConfig;

/**
 * How Grizzly is set up for the Event Handler: one listener whose selector threads parse every request and hand
 * it to {@link AdmissionControl}, with our codec, limits and timeouts in place of Grizzly's defaults.
 */
public final class GrizzlyTuning {
    private static final String LISTENER = "eventhandler";

    private GrizzlyTuning() {
    }

    /**
     * A server, not started, whose one listener hands every request to {@code front}.
     *
     * @param tls   the listener's mutual TLS in secure mode; {@code null} for plain HTTP
     * @param probe told of every connection accepted and closed
     * @param waiting told of every accept, read and request, to hold the connections waited on to their bounds
     */
    public static HttpServer server(EventHandlerConfig config, SSLEngineConfigurator tls, HttpHandler front,
                                    ConnectionProbe probe, WaitingConnections waiting) {
        HttpServer http = new HttpServer();
        http.addListener(listener(config, tls, probe, waiting));
        http.getServerConfiguration().getMonitoringConfig().getWebServerConfig().addProbes(waiting.requestProbe());
        http.getServerConfiguration().addHttpHandler(front, HttpHandlerRegistration.ROOT);
        http.getServerConfiguration().setJmxEnabled(false);
        http.getServerConfiguration().setHttpServerName("EventHandler");
        http.getServerConfiguration().setHttpServerVersion("");
        http.getServerConfiguration().setDefaultErrorPageGenerator(new JsonErrorPages());
        // Grizzly decodes query strings as ISO-8859-1 unless told otherwise; URLs are UTF-8.
        http.getServerConfiguration().setDefaultQueryEncoding(StandardCharsets.UTF_8);
        // Grizzly's graceful shutdown counts requests in flight, but a suspended response whose client went
        // away is never counted out, so it would always wait the whole grace period. The server drains
        // streams and waits for admitted requests itself.
        http.getServerConfiguration().setGracefulShutdownSupported(false);
        return http;
    }

    /** The listener of a server made by {@link #server}. */
    public static NetworkListener listener(HttpServer http) {
        return http.getListener(LISTENER);
    }

    private static NetworkListener listener(EventHandlerConfig config, SSLEngineConfigurator tls,
                                            ConnectionProbe probe, WaitingConnections waiting) {
        NetworkListener listener = new NetworkListener(LISTENER, config.serverHost(), config.serverPort());
        // Grizzly closes a kept-alive connection after 256 requests by default; that would undo the
        // publisher's connection reuse, so there is no cap, only the idle timeout.
        listener.getKeepAlive().setMaxRequestsCount(-1);
        listener.getKeepAlive().setIdleTimeoutInSeconds((int) config.idleTimeout().toSeconds());
        listener.setMaxHttpHeaderSize(config.maxHeaderBytes());
        listener.registerAddOn(new IgnoredUpgrades());
        listener.registerAddOn(StrictHttpCodec.addOn());
        if (tls != null) {
            listener.setSecure(true);
            listener.setSSLEngineConfig(tls);
        }
        TCPNIOTransport transport = listener.getTransport();
        transport.setMemoryManager(pipelineSafeMemory());
        transport.setSelectorRunnersCount(config.selectorThreads());
        // Selectors parse requests; AdmissionControl hands them to our bounded workers. Setting the
        // strategy again drops the worker pool Grizzly would otherwise create on its own. Failed accepts are
        // counted and said, once, which Grizzly does not.
        transport.setIOStrategy(new AcceptFailures(SameThreadIOStrategy.getInstance(), Duration.ofMinutes(1)));
        transport.setWriteTimeout(config.writeTimeout().toSeconds(), TimeUnit.SECONDS);
        transport.getConnectionMonitoringConfig().addProbes(probe, waiting.connectionProbe());
        transport.setKernelThreadPoolConfig(ThreadPoolConfig.defaultConfig().copy()
                .setPoolName("eh-selector").setCorePoolSize(config.selectorThreads())
                .setMaxPoolSize(config.selectorThreads()));
        return listener;
    }

    /**
     * Grizzly's default memory manager (HeapMemoryManager) corrupts pipelined requests. Grizzly hands a request
     * body on as the read buffer itself, cut off by its limit but not its capacity, and the next requests in the
     * same read as a view of the rest of that buffer. When the request is done its body is disposed, and the
     * thread's allocation pool takes back the whole capacity, the next requests' bytes with it: the next response
     * is encoded over them. The server then read a response line as a request (505 with the target "200"), or
     * failed with a ClassCastException in the filter chain and dropped the connection: deterministic for a burst
     * of more than one read buffer (64 KiB) of publishes. The pooled manager counts the views of a buffer and
     * frees it only when the last one is disposed. Its pool holds at most 3% of the heap (1.9 MiB at -Xmx64m),
     * filled as buffers are used, not up front; past it, buffers are allocated and collected as usual.
     */
    private static PooledMemoryManager pipelineSafeMemory() {
        return new PooledMemoryManager(PooledMemoryManager.DEFAULT_BASE_BUFFER_SIZE,
                PooledMemoryManager.DEFAULT_NUMBER_OF_POOLS, PooledMemoryManager.DEFAULT_GROWTH_FACTOR,
                Runtime.getRuntime().availableProcessors(), PooledMemoryManager.DEFAULT_HEAP_USAGE_PERCENTAGE, 0f, false);
    }
}

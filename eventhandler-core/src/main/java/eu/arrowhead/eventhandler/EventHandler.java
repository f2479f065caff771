package eu.arrowhead.eventhandler;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * The command that runs the Event Handler: {@code java -jar eventhandler.jar [--config=FILE] [--key=value ...]}.
 *
 * <p>Exit codes: 0 after a shutdown on SIGTERM or SIGINT, 1 if the server could not start (port taken),
 * 2 for a configuration error.
 */
public final class EventHandler {
    private static final Logger LOG = LoggerFactory.getLogger(EventHandler.class);

    private EventHandler() {
    }

    public static void main(String[] args) {
        // A JVM stopped by a signal through shutdown hooks exits with 143, which service managers count
        // as a failure. Handling the signal ourselves lets a requested stop end with 0.
        CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("TERM"), signal -> stop.countDown());
        Signal.handle(new Signal("INT"), signal -> stop.countDown());

        EventHandlerConfig config;
        EventHandlerServer server;
        try {
            config = ConfigLoader.load(args, System.getenv());
            LOG.info("effective configuration:{}", config.describe());
            LOG.info("heap: {}", config.describeHeap());
            server = EventHandlerServer.start(config);
        } catch (ConfigException e) {
            // Starting checks some settings only it can (key stores, the ACL file): all are configuration errors.
            LOG.error("not started: {}", e.getMessage());
            System.exit(2);
            return;
        } catch (IOException | RuntimeException e) {
            LOG.error("not started: {}", e instanceof IOException ? e.getMessage() : e.toString());
            System.exit(1);
            return;
        }
        LOG.info("Event Handler listening on port {}: publish at {}/eventhandler/publish, subscribe at"
                + " {}/eventhandler/events", server.port(), server.baseUri(), server.baseUri());
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.info("stopping: delivering what subscriber queues hold (at most {} s)",
                config.shutdownGrace().toSeconds());
        try {
            boolean clean = server.shutdown();
            LOG.info("stopped{}", clean ? "" : " (some streams or requests were cut off at the end of the grace period)");
        } finally {
            System.exit(0);
        }
    }
}

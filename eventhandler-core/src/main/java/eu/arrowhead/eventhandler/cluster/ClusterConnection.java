package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.config.ClusterConfig;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.support.Status;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's connection to the NATS servers, and what it knows of it: up, or cut off since when and why.
 *
 * <p>The connection moves to another server of {@code cluster.nats-urls} by itself when one fails, and retries
 * for ever; while it has none, the node is <em>cut off</em>: the {@link Listener} is told at once (publishes
 * and new streams are refused), and again once it has lasted {@code cluster.outage-grace-millis} (the node
 * ends its streams, so that their clients resume on a node that still has the stream). A move from one NATS
 * server to another usually takes milliseconds, which is why open streams are not ended at once.
 */
public final class ClusterConnection implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterConnection.class);
    private static final Duration PING_INTERVAL = Duration.ofSeconds(1);
    /** Room in jnats' outgoing queue beyond the publishes ({@code cluster.max-pending-acks}). */
    private static final int OTHER_OUTGOING_MESSAGES = 1024;
    private static final String CLOSED = "its NATS connection is closed";

    /**
     * Told when the node is cut off from NATS and when it is back, on NATS's executor (one thread, so in order), and
     * when the cut-off has lasted, on the node's own thread.
     */
    public interface Listener {
        /** The node has no NATS server now. */
        void cutOff(String why);

        /** It has been cut off for {@code cluster.outage-grace-millis}; told once per outage. */
        void cutOffTooLong();

        /** It has a NATS server again. */
        void restored();
    }

    private final String nodeName;
    private final Duration outageGrace;
    private final AtomicReference<Outage> outage = new AtomicReference<>();
    private volatile Listener listener;
    private volatile Connection nats;
    /** The NATS server the node is or was last connected to: a lost connection no longer names it. */
    private volatile String lastServer;
    /** Set by {@link #close}: the connection's end is then the node's own doing, not an outage. */
    private volatile boolean closing;
    private volatile boolean connectedOnce;

    /** When this node lost NATS, why, and whether its streams were ended for it. */
    private record Outage(Instant since, long sinceNanos, String why, boolean streamsEnded) {
    }

    private ClusterConnection(String nodeName, Duration outageGrace) {
        this.nodeName = nodeName;
        this.outageGrace = outageGrace;
    }

    /**
     * Connects to one of the NATS servers.
     *
     * @throws IOException if none answers within {@code cluster.timeout-seconds}
     */
    public static ClusterConnection connect(ClusterConfig config, String nodeName) throws IOException {
        ClusterConnection connection = new ClusterConnection(nodeName, config.outageGrace());
        QuietErrors errors = connection.new QuietErrors();
        Options.Builder options = Options.builder()
                .servers(config.natsUrls().toArray(String[]::new))
                .connectionName("eventhandler " + nodeName)
                .connectionTimeout(config.timeout())
                .maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(250))
                // A frozen or cut-off server keeps its socket open and silent: only missed pings tell. Pings 1 s
                // apart, three unanswered, notice it in 3-5 s (jnats skips a ping while messages come), before
                // JetStream has a new leader (5-7 s in ClusterPartitionIT), so the node is on a live server by
                // then; pings 2 s apart, two unanswered, took 6-8 s. The cost: jnats sends pings at a fixed
                // rate, so a node that stood still (no CPU, a paused VM) for 4 s or more finds them unanswered
                // and reconnects: a cut-off of milliseconds, or past cluster.outage-grace-millis ended streams.
                .pingInterval(PING_INTERVAL)
                .maxPingsOut(3)
                // A publish message jnats has not written yet is, nearly always, a sending still awaiting its
                // acknowledgement (one jnats gave up on stays queued until written), so cluster.max-pending-acks
                // bounds them. With room for them and for the node's other messages (pulls, acknowledgements of
                // push deliveries), publishes alone do not fill the queue when a frozen server's socket stops
                // taking bytes; a full queue makes a send wait up to 2 s for room, on the publisher's clock thread
                // when it sends an event again.
                .maxMessagesInOutgoingQueue(Math.max(Options.DEFAULT_MAX_MESSAGES_IN_OUTGOING_QUEUE,
                        config.maxPendingAcks() + OTHER_OUTGOING_MESSAGES))
                .connectionListener(connection::connectionEvent)
                .errorListener(errors);
        SSLContext tls = NatsLinkOptions.apply(config.link(), options);
        try {
            connection.nats = Nats.connect(options.build());
            connection.lastServer = connection.nats.getConnectedUrl();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to NATS", e);
        } catch (IOException e) {
            throw new IOException(RefusedLink.why(config.link(), config.natsUrls(), e, errors.startServerError,
                    errors.startProblem, tls, config.timeout()), e);
        }
        return connection;
    }

    /** Whom to tell of outages; set once the node is wired, before it serves. */
    void listen(Listener listener) {
        this.listener = listener;
    }

    Connection nats() {
        return nats;
    }

    JetStream jetStream(Duration timeout) throws IOException {
        return nats.jetStream(JetStreamOptions.builder().requestTimeout(timeout).build());
    }

    JetStreamManagement management(Duration timeout) throws IOException {
        return nats.jetStreamManagement(JetStreamOptions.builder().requestTimeout(timeout).build());
    }

    /** This node's name. */
    public String nodeName() {
        return nodeName;
    }

    /** Whether the node has a NATS server now: {@link #cutOff} is {@code null}. */
    public boolean isUp() {
        return cutOff() == null;
    }

    /**
     * Since when and why the node is cut off, read together; {@code null} when it is not. A lost connection knows
     * it a moment before NATS's executor tells {@link #connectionEvent}, which records the outage and tells the
     * {@link Listener}: until then the cut-off is dated now. Only that executor records and ends outages, one event
     * after the other, so the listener hears them in their order. Read it once: a refusal that asked twice could
     * find the node back in between, and give no reason.
     */
    public CutOff cutOff() {
        Outage now = outage.get();
        if (now != null) {
            return new CutOff(now.since, now.why);
        }
        Connection connection = nats;
        Connection.Status status = connection == null ? Connection.Status.CLOSED : connection.getStatus();
        if (closing || status == Connection.Status.CLOSED) {
            return new CutOff(Instant.now(), CLOSED);
        }
        return status == Connection.Status.CONNECTED ? null : new CutOff(Instant.now(), lostServer());
    }

    /** Since when and why the node has no NATS server. */
    public record CutOff(Instant since, String why) {
    }

    /** The NATS server the node is connected to, or {@code null}. */
    public String connectedServer() {
        Connection connection = nats;
        return connection == null ? null : connection.getConnectedUrl();
    }

    /**
     * Ends the open streams once an outage has lasted {@code cluster.outage-grace-millis}; the server calls it
     * a few times a second.
     */
    public void checkOutage() {
        Outage now = outage.get();
        if (now == null || now.streamsEnded || System.nanoTime() - now.sinceNanos < outageGrace.toNanos()) {
            return;
        }
        if (outage.compareAndSet(now, new Outage(now.since, now.sinceNanos, now.why, true))) {
            LOG.warn("node {} has been cut off from NATS for {} ms; ending its streams so that their clients"
                    + " resume on another node", nodeName, outageGrace.toMillis());
            Listener told = listener;
            if (told != null) {
                told.cutOffTooLong();
            }
        }
    }

    private void connectionEvent(Connection connection, ConnectionListener.Events event) {
        if (!connectedOnce && event != ConnectionListener.Events.CONNECTED) {
            // Never connected: connect() fails and says why itself; a start without NATS is one line, not two.
            LOG.debug("NATS connection event before the first connection: {}", event);
            return;
        }
        switch (event) {
            case CONNECTED -> {
                connectedOnce = true;
                noteServer(connection);
            }
            case DISCONNECTED -> cutOff(lostServer());
            case CLOSED -> cutOff(CLOSED);
            case RECONNECTED, RESUBSCRIBED -> restore(connection);
            default -> LOG.debug("NATS connection event: {}", event);
        }
    }

    private String lostServer() {
        return "lost its NATS server " + lastServer;
    }

    /** Events come on NATS's executor, maybe late: one that finds no server keeps the last one named. */
    private void noteServer(Connection connection) {
        String server = connection.getConnectedUrl();
        if (server != null) {
            lastServer = server;
        }
    }

    private void cutOff(String why) {
        if (closing) {
            return;
        }
        if (outage.compareAndSet(null, new Outage(Instant.now(), System.nanoTime(), why, false))) {
            LOG.warn("node {} {}; refusing publishes and new streams until it has one again", nodeName, why);
            Listener told = listener;
            if (told != null) {
                told.cutOff("this node " + why);
            }
        }
    }

    private void restore(Connection connection) {
        if (connection.getStatus() != Connection.Status.CONNECTED) {
            return;
        }
        noteServer(connection);
        Outage was = outage.getAndSet(null);
        if (was != null) {
            LOG.info("node {} is connected to NATS again ({}), after {} ms", nodeName, connection.getConnectedUrl(),
                    (System.nanoTime() - was.sinceNanos) / 1_000_000);
            Listener told = listener;
            if (told != null) {
                told.restored();
            }
        }
    }

    @Override
    public void close() {
        Connection connection = nats;
        if (connection == null) {
            return;
        }
        listener = null;
        closing = true;
        try {
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * jnats logs its errors to the console by default; ours go through SLF4J, once, without stack traces. Before
     * the first connection they are kept instead: a start that fails says why in one line ({@link RefusedLink}).
     */
    private final class QuietErrors implements ErrorListener {
        private volatile String startServerError;
        private volatile Exception startProblem;

        @Override
        public void errorOccurred(Connection conn, String error) {
            if (connectedOnce) {
                LOG.warn("NATS reports an error: {}", error);
            } else {
                LOG.debug("NATS error before the first connection: {}", error);
                startServerError = error;
            }
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            LOG.debug("NATS connection exception: {}", exp.toString());
            if (!connectedOnce) {
                startProblem = exp;
            }
        }

        @Override
        public void pullStatusWarning(Connection conn, JetStreamSubscription sub, Status status) {
            if (status.getCode() == 404 || status.getCode() == 408) {
                return; // a pull that ended empty, or expired: every few seconds per cursor, nothing to tell
            }
            LOG.debug("a pull of {} was answered {} {}", sub.getConsumerName(), status.getCode(), status.getMessage());
        }

        @Override
        public void pullStatusError(Connection conn, JetStreamSubscription sub, Status status) {
            LOG.debug("a pull of {} failed: {} {}", sub.getConsumerName(), status.getCode(), status.getMessage());
        }

        @Override
        public void heartbeatAlarm(Connection conn, JetStreamSubscription sub, long lastStreamSequence,
                                   long lastConsumerSequence) {
            LOG.debug("the pull of {} missed its heartbeats", sub.getConsumerName());
        }
    }
}

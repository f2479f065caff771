package eu.arrowhead.eventhandler.http;

import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.ConnectionProbe;
import org.glassfish.grizzly.http.server.HttpServerFilter;
import org.glassfish.grizzly.http.server.HttpServerProbe;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;
import org.glassfish.grizzly.nio.transport.TCPNIOServerConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the connections with no request in progress to {@code server.max-idle-connections}: a new connection past
 * it takes the place of the one idle longest, which is closed. Idle means just opened, sending a request's head,
 * or kept alive between requests; a request whose head is whole, an SSE stream above all, is never displaced (the
 * limits of requests and streams bound those).
 *
 * <p>Without it nothing bounded the connections but the process's descriptors: 6 000 connections that each sent
 * 7.5 KB of a head, from one anonymous client, ran a {@code -Xmx64m} server out of heap and killed its selector
 * threads. Displacing rather than refusing keeps junk from locking anyone out: a publisher whose kept-alive
 * connection was displaced opens another, and a new client is let in. Only a connection idle for a second or more
 * gives way: one younger may be a client still in its TLS handshake, or whose head is read but not yet parsed, and a
 * herd of reconnecting subscribers must not displace each other before they could speak. While every idle one is
 * younger, the newest is closed instead. At most one line a minute says it is happening; the count is the metric
 * {@code eventhandler_connections_displaced_total}.
 *
 * <p>Grizzly tells of each transition on the thread that makes it (selector or worker); the sets are kept under
 * one lock for a few assignments each, and a displaced connection is closed after the lock is released.
 */
public final class IdleConnections {
    private static final Logger LOG = LoggerFactory.getLogger(IdleConnections.class);
    private static final long LINE_EVERY_NANOS = 60_000_000_000L;
    private static final long YOUNG_NANOS = 1_000_000_000L;

    private final int max;
    private final Object lock = new Object();
    /** Open connections with no request in progress, the one idle longest first, with when they became idle. */
    private final LinkedHashMap<Connection<?>, Long> idle = new LinkedHashMap<>();
    /** Open connections with a request in progress. */
    private final Set<Connection<?>> busy = new HashSet<>();
    private long displaced;
    private long displacedSinceLine;
    private long lastLineNanos = System.nanoTime() - LINE_EVERY_NANOS;

    /** @param max the most connections with no request in progress held at once */
    public IdleConnections(int max) {
        this.max = max;
    }

    public int max() {
        return max;
    }

    /** Connections closed to make room for a new one. */
    public long displaced() {
        synchronized (lock) {
            return displaced;
        }
    }

    /** Told of connections opened and closed. */
    ConnectionProbe connectionProbe() {
        return new ConnectionProbe.Adapter() {
            @Override
            public void onAcceptEvent(Connection serverConnection, Connection clientConnection) {
                becameIdle(clientConnection, true);
            }

            @Override
            public void onCloseEvent(Connection connection) {
                if (!(connection instanceof TCPNIOServerConnection)) {
                    closed(connection);
                }
            }
        };
    }

    /** Told of requests begun (their head whole) and ended. */
    HttpServerProbe requestProbe() {
        return new HttpServerProbe.Adapter() {
            @Override
            public void onRequestReceiveEvent(HttpServerFilter filter, Connection connection, Request request) {
                busy(connection);
            }

            @Override
            public void onRequestCompleteEvent(HttpServerFilter filter, Connection connection, Response response) {
                becameIdle(connection, false);
            }
        };
    }

    private void becameIdle(Connection<?> connection, boolean opened) {
        Connection<?> closed = null;
        long now = System.nanoTime();
        synchronized (lock) {
            if (!opened && !busy.remove(connection)) {
                return; // closed while its request ran
            }
            idle.put(connection, now);
            if (idle.size() > max) {
                Iterator<Map.Entry<Connection<?>, Long>> first = idle.entrySet().iterator();
                Map.Entry<Connection<?>, Long> longest = first.next();
                if (now - longest.getValue() >= YOUNG_NANOS) {
                    closed = longest.getKey();
                    first.remove();
                } else {
                    closed = connection;
                    idle.remove(connection);
                }
                displaced++;
            }
        }
        if (closed != null) {
            displace(closed);
        }
    }

    private void busy(Connection<?> connection) {
        synchronized (lock) {
            if (idle.remove(connection) != null) {
                busy.add(connection);
            }
        }
    }

    private void closed(Connection<?> connection) {
        synchronized (lock) {
            if (idle.remove(connection) == null) {
                busy.remove(connection);
            }
        }
    }

    private void displace(Connection<?> connection) {
        connection.closeSilently();
        long lines = 0;
        long now = System.nanoTime();
        synchronized (lock) {
            displacedSinceLine++;
            if (now - lastLineNanos >= LINE_EVERY_NANOS) {
                lines = displacedSinceLine;
                displacedSinceLine = 0;
                lastLineNanos = now;
            }
        }
        if (lines > 0) {
            LOG.warn("{} connections with no request in progress were open (server.max-idle-connections): closed"
                    + " the one idle longest, or the newest while all were under a second old, {} times since this was"
                    + " last said, {} in all",
                    max, lines, displaced());
        }
    }
}

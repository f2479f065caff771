package eu.arrowhead.eventhandler.http;

import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.glassfish.grizzly.Buffer;
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
 * Holds the connections that have sent part of a request's head, not yet all of it, to
 * {@code server.max-incomplete-heads}: past it, the one waiting longest is closed if it has waited a second, else
 * the newest. A head that arrives whole is parsed in the read that brought it, so clients that send their heads as
 * clients do, a herd of reconnecting subscribers included, are never counted at once; what stays counted is a head
 * sent slowly, or half and then nothing.
 *
 * <p>Without it nothing bounded those but the process's descriptors: a connection holds 12 KB once a byte of a head
 * has arrived (Grizzly's request and response objects) and 25 KB with 7.5 KB of head, and 6 000 such connections
 * from one anonymous client ran a {@code -Xmx64m} server out of heap and killed its selector threads. Closing the
 * one waiting longest keeps junk from locking anyone out; the second's grace spares a client in a TLS handshake,
 * whose bytes count as a head begun. At most one line a minute says it is happening; the count is the metric
 * {@code eventhandler_connections_displaced_total}.
 *
 * <p>Grizzly tells of each read on the thread that makes it, before the request is parsed; the sets are kept
 * under one lock for a few assignments each, and a connection is closed after the lock is released.
 */
public final class IncompleteHeads {
    private static final Logger LOG = LoggerFactory.getLogger(IncompleteHeads.class);
    private static final long LINE_EVERY_NANOS = 60_000_000_000L;
    private static final long GRACE_NANOS = 1_000_000_000L;

    private final int max;
    private final Object lock = new Object();
    /** Connections with part of a head read, the one waiting longest first, with when its head began. */
    private final LinkedHashMap<Connection<?>, Long> begun = new LinkedHashMap<>();
    /** Connections with a request in progress: their reads are the request's body. */
    private final Set<Connection<?>> busy = new HashSet<>();
    private long displaced;
    private long displacedSinceLine;
    private long lastLineNanos = System.nanoTime() - LINE_EVERY_NANOS;

    /** @param max the most connections with a head begun and not whole, at once */
    public IncompleteHeads(int max) {
        this.max = max;
    }

    public int max() {
        return max;
    }

    /** Connections closed to hold the bound. */
    public long displaced() {
        synchronized (lock) {
            return displaced;
        }
    }

    /** Told of every read, before its bytes are parsed, and of connections closed. */
    ConnectionProbe connectionProbe() {
        return new ConnectionProbe.Adapter() {
            @Override
            public void onReadEvent(Connection connection, Buffer data, int size) {
                if (size > 0) {
                    read(connection);
                }
            }

            @Override
            public void onCloseEvent(Connection connection) {
                if (!(connection instanceof TCPNIOServerConnection)) {
                    closed(connection);
                }
            }
        };
    }

    /** Told of heads made whole (a request begins) and of requests ended. */
    HttpServerProbe requestProbe() {
        return new HttpServerProbe.Adapter() {
            @Override
            public void onRequestReceiveEvent(HttpServerFilter filter, Connection connection, Request request) {
                headWhole(connection);
            }

            @Override
            public void onRequestCompleteEvent(HttpServerFilter filter, Connection connection, Response response) {
                synchronized (lock) {
                    busy.remove(connection);
                }
            }
        };
    }

    private void read(Connection<?> connection) {
        Connection<?> closed = null;
        long now = System.nanoTime();
        synchronized (lock) {
            if (busy.contains(connection) || begun.putIfAbsent(connection, now) != null) {
                return;
            }
            if (begun.size() > max) {
                Iterator<Map.Entry<Connection<?>, Long>> first = begun.entrySet().iterator();
                Map.Entry<Connection<?>, Long> longest = first.next();
                if (now - longest.getValue() >= GRACE_NANOS) {
                    closed = longest.getKey();
                    first.remove();
                } else {
                    closed = connection;
                    begun.remove(connection);
                }
                displaced++;
            }
        }
        if (closed != null) {
            displace(closed);
        }
    }

    private void headWhole(Connection<?> connection) {
        synchronized (lock) {
            begun.remove(connection);
            busy.add(connection);
        }
    }

    private void closed(Connection<?> connection) {
        synchronized (lock) {
            begun.remove(connection);
            busy.remove(connection);
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
            LOG.warn("{} connections had sent part of a request's head (server.max-incomplete-heads): closed the one"
                    + " waiting longest, or the newest while all had waited under a second, {} times since this was"
                    + " last said, {} in all", max, lines, displaced());
        }
    }
}

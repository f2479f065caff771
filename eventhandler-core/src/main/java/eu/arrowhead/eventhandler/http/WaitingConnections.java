package eu.arrowhead.eventhandler.http;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
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
 * Holds the connections the server waits on for a request's head to their bounds: silent ones (accepted, or kept
 * alive after a request, and nothing sent since) to {@code server.max-silent-connections}, and those that have sent
 * part of a head, not yet all of it, to {@code server.max-incomplete-heads}. Past a bound, the one waiting longest
 * is closed if it has waited a second, else the newest (silent ones: none while all have waited under a second, a
 * herd of clients connecting at once). A head that arrives whole is parsed in the read that
 * brought it, so a connection that sends its head as clients do is silent until that read and then serving a
 * request; what stays counted is a connection that sends nothing, or half a head and then nothing.
 *
 * <p>Without the bounds nothing held those but the process's descriptors (the JVM raises its limit to the hard
 * one: 20 000 here, 65 536 in the Raspberry Pi unit). A connection holds 2 KB silent from its accept, 4.4 KB kept alive after a request, 12 KB once a byte of a
 * head has arrived (Grizzly's request and response objects) and 25 KB with 7.5 KB of head: 6 000 half-sent heads
 * from one anonymous client ran a {@code -Xmx64m} server out of heap and killed its selector threads, and 20 000
 * silent connections would hold 40-88 MB. Closing the one waiting longest keeps junk from locking anyone out (a
 * kept-alive client whose connection is closed while idle opens another, as after the idle timeout); the second's
 * grace spares a herd of clients just connected, and one in a TLS handshake, whose bytes count as a head begun. At
 * most one line a minute says it is happening; the count is the metric
 * {@code eventhandler_connections_displaced_total}.
 *
 * <p>Grizzly tells of each accept and read on the thread that makes it, before the request is parsed; the maps are
 * kept under one lock for a few assignments each, and a connection is closed after the lock is released.
 */
public final class WaitingConnections {
    private static final Logger LOG = LoggerFactory.getLogger(WaitingConnections.class);
    private static final long LINE_EVERY_NANOS = 60_000_000_000L;
    private static final long GRACE_NANOS = 1_000_000_000L;
    /**
     * Silent connections are never closed as the newest: that would be at their accept, inside Grizzly's accept
     * (a CI run of WaitingConnectionsIT ran out of heap there), or at the end of a request just answered. While all
     * have waited under a second (a herd connecting at once) they may be more than their bound, by what the clients
     * open in a second; those that have waited a second then give way.
     */
    private static final int NO_NEWEST = Integer.MAX_VALUE - 10_000_000;

    private final int maxSilent;
    private final int maxIncompleteHeads;
    private final Object lock = new Object();
    /** Connections that have sent nothing since they were accepted or their last request ended, longest first. */
    private final LinkedHashMap<Connection<?>, Long> silent = new LinkedHashMap<>();
    /** Connections with part of a head read, the one waiting longest first, with when its head began. */
    private final LinkedHashMap<Connection<?>, Long> begun = new LinkedHashMap<>();
    /** Connections with a request in progress: their reads are the request's body. */
    private final Set<Connection<?>> busy = new HashSet<>();
    private long displaced;
    private long displacedSinceLine;
    private long lastLineNanos = System.nanoTime() - LINE_EVERY_NANOS;

    /**
     * @param maxSilent          the most connections that have sent nothing since accepted or since their last
     *                           request, at once
     * @param maxIncompleteHeads the most connections with a head begun and not whole, at once
     */
    public WaitingConnections(int maxSilent, int maxIncompleteHeads) {
        this.maxSilent = maxSilent;
        this.maxIncompleteHeads = maxIncompleteHeads;
    }

    public int maxSilent() {
        return maxSilent;
    }

    public int maxIncompleteHeads() {
        return maxIncompleteHeads;
    }

    /** Connections closed to hold the bounds. */
    public long displaced() {
        synchronized (lock) {
            return displaced;
        }
    }

    /** Told of every connection accepted, every read before its bytes are parsed, and of connections closed. */
    ConnectionProbe connectionProbe() {
        return new ConnectionProbe.Adapter() {
            @Override
            public void onAcceptEvent(Connection serverConnection, Connection clientConnection) {
                accepted(clientConnection);
            }

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
                requestEnded(connection);
            }
        };
    }

    private void accepted(Connection<?> connection) {
        List<Connection<?>> closed;
        synchronized (lock) {
            silent.put(connection, System.nanoTime());
            closed = overBound(silent, maxSilent, NO_NEWEST, connection);
        }
        displace(closed);
    }

    private void read(Connection<?> connection) {
        List<Connection<?>> closed;
        synchronized (lock) {
            silent.remove(connection);
            if (busy.contains(connection) || begun.putIfAbsent(connection, System.nanoTime()) != null) {
                return;
            }
            closed = overBound(begun, maxIncompleteHeads, 0, connection);
        }
        displace(closed);
    }

    private void headWhole(Connection<?> connection) {
        synchronized (lock) {
            // A pipelined request's head was read with the one before it: parsed without a read of its own.
            silent.remove(connection);
            begun.remove(connection);
            busy.add(connection);
        }
    }

    private void requestEnded(Connection<?> connection) {
        List<Connection<?>> closed = List.of();
        synchronized (lock) {
            // A request ended by a closed connection is told after the close: it waits for nothing then.
            if (busy.remove(connection) && connection.isOpen()) {
                silent.put(connection, System.nanoTime());
                closed = overBound(silent, maxSilent, NO_NEWEST, connection);
            }
        }
        displace(closed);
    }

    private void closed(Connection<?> connection) {
        synchronized (lock) {
            silent.remove(connection);
            begun.remove(connection);
            busy.remove(connection);
        }
    }

    /**
     * The connections to close if {@code waiting} holds more than {@code max}: those waiting longest that have waited
     * the grace, as many as are over; else, past {@code max + herd}, {@code newest}. Taken out of {@code waiting}.
     * Called under the lock.
     *
     * @param herd how many more may wait while all have waited under the grace
     */
    private List<Connection<?>> overBound(LinkedHashMap<Connection<?>, Long> waiting, int max, int herd,
                                          Connection<?> newest) {
        List<Connection<?>> closed = new ArrayList<>(0);
        long now = System.nanoTime();
        Iterator<Map.Entry<Connection<?>, Long>> longest = waiting.entrySet().iterator();
        while (waiting.size() > max) {
            Map.Entry<Connection<?>, Long> next = longest.next();
            if (now - next.getValue() < GRACE_NANOS) {
                break;
            }
            closed.add(next.getKey());
            longest.remove();
        }
        if (waiting.size() > max + herd) {
            closed.add(newest);
            waiting.remove(newest);
        }
        displaced += closed.size();
        return closed;
    }

    private void displace(List<Connection<?>> connections) {
        if (connections.isEmpty()) {
            return;
        }
        connections.forEach(Connection::closeSilently);
        long lines = 0;
        long now = System.nanoTime();
        synchronized (lock) {
            displacedSinceLine += connections.size();
            if (now - lastLineNanos >= LINE_EVERY_NANOS) {
                lines = displacedSinceLine;
                displacedSinceLine = 0;
                lastLineNanos = now;
            }
        }
        if (lines > 0) {
            LOG.warn("{} silent connections (server.max-silent-connections) or {} with part of a request's head sent"
                    + " (server.max-incomplete-heads) were open: closed the one waiting longest, or the newest while"
                    + " all had waited under a second, {} times since this was last said, {} in all", maxSilent,
                    maxIncompleteHeads, lines, displaced());
        }
    }
}

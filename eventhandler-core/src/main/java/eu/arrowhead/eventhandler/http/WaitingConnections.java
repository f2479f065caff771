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
 * Holds the connections the server waits on for a request's head to their bounds: silent ones (accepted, or kept alive
 * after a request, and nothing sent since) to {@code server.max-silent-connections}, and those that have sent part of
 * a head, not yet all of it, to {@code server.max-incomplete-heads}. Past a bound, the one waiting longest is closed
 * if it has waited a second, else the newest but one (silent ones: past twice their bound, a herd of clients
 * connecting at once; see {@link Line}). A head that arrives whole is parsed in the read that brought it, so a
 * connection that sends its head as clients do is silent until that read and then serving a request; what stays
 * counted is a connection that sends nothing, or half a head and then nothing.
 *
 * <p>Without the bounds nothing held those but the process's descriptors (the JVM raises its limit to the hard one:
 * 20 000 here, 65 536 in the Raspberry Pi unit). A connection holds 2 KB silent from its accept, 4.4 KB kept alive
 * after a request, 12 KB once a byte of a head has arrived (Grizzly's request and response objects) and 25 KB with
 * 7.5 KB of head: 6 000 half-sent heads from one anonymous client ran a {@code -Xmx64m} server out of heap and killed
 * its selector threads, and 20 000 silent connections would hold 40-88 MB. Closing the one waiting longest keeps junk
 * from locking anyone out (a kept-alive client whose connection is closed while idle opens another, as after the idle
 * timeout); the second's grace spares a herd of clients just connected, and one in a TLS handshake, whose bytes count
 * as a head begun. At most one line a minute says it is happening; the count is the metric
 * {@code eventhandler_connections_displaced_total}.
 *
 * <p>Grizzly tells of each accept and read on the thread that makes it, before the request is parsed; the maps are
 * kept under one lock for a few assignments each, and a connection is closed after the lock is released.
 */
public final class WaitingConnections {
    private static final Logger LOG = LoggerFactory.getLogger(WaitingConnections.class);
    private static final long LINE_EVERY_NANOS = 60_000_000_000L;
    private static final long GRACE_NANOS = 1_000_000_000L;

    private final Object lock = new Object();
    /** Connections that have sent nothing since they were accepted or their last request ended. */
    private final Line silent;
    /** Connections with part of a head read, with when their head began. */
    private final Line begun;
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
        // A herd of clients connecting at once is silent until its heads are read: twice the bound may wait.
        this.silent = new Line(maxSilent, 2 * maxSilent);
        this.begun = new Line(maxIncompleteHeads, maxIncompleteHeads);
    }

    public int maxSilent() {
        return silent.max;
    }

    public int maxIncompleteHeads() {
        return begun.max;
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

            /** A request suspended on a connection closed already is cancelled at once, and never completes. */
            @Override
            public void onRequestCancelEvent(HttpServerFilter filter, Connection connection, Request request) {
                requestEnded(connection);
            }
        };
    }

    // A connection closed by another thread is told of its close before, under the lock (Grizzly marks it closed
    // first): each call that would add it checks that it is open, or it would stay counted for good.

    private void accepted(Connection<?> connection) {
        List<Connection<?>> closed;
        synchronized (lock) {
            if (!connection.isOpen()) {
                return;
            }
            closed = silent.add(connection);
        }
        displace(closed);
    }

    private void read(Connection<?> connection) {
        List<Connection<?>> closed;
        synchronized (lock) {
            silent.remove(connection);
            if (busy.contains(connection) || !connection.isOpen()) {
                return;
            }
            closed = begun.add(connection);
        }
        displace(closed);
    }

    private void headWhole(Connection<?> connection) {
        synchronized (lock) {
            // A pipelined request's head was read with the one before it: parsed without a read of its own.
            silent.remove(connection);
            begun.remove(connection);
            if (connection.isOpen()) {
                busy.add(connection);
            }
        }
    }

    private void requestEnded(Connection<?> connection) {
        List<Connection<?>> closed = List.of();
        synchronized (lock) {
            // A request ended by a closed connection is told after the close: it waits for nothing then.
            if (busy.remove(connection) && connection.isOpen()) {
                closed = silent.add(connection);
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

    private void displace(List<Connection<?>> connections) {
        if (connections.isEmpty()) {
            return;
        }
        connections.forEach(Connection::closeSilently);
        long lines = 0;
        long now = System.nanoTime();
        synchronized (lock) {
            displaced += connections.size();
            displacedSinceLine += connections.size();
            if (now - lastLineNanos >= LINE_EVERY_NANOS) {
                lines = displacedSinceLine;
                displacedSinceLine = 0;
                lastLineNanos = now;
            }
        }
        if (lines > 0) {
            LOG.warn("{} silent connections (server.max-silent-connections) or {} with part of a request's head sent"
                    + " (server.max-incomplete-heads) were open: closed the one waiting longest, or the newest but one"
                    + " while all had waited under a second, {} times since this was last said, {} in all", silent.max,
                    begun.max, lines, displaced());
        }
    }

    /**
     * Connections of one kind, the one waiting longest first, and their bound. Called under the lock.
     *
     * <p>Past {@code max}, those that have waited a second give way, longest first. While all are younger (a herd
     * connecting at once, or a flood of junk), past {@code maxWhileYoung} the newest but one does: the newest is in
     * Grizzly's accept, or its bytes are not parsed yet and may be a whole head, while the one added before it has
     * been accepted, or has shown with its read that its head is not whole. If that one has left, none gives way
     * this time: the line is then no longer than before the add.
     */
    private static final class Line {
        private final LinkedHashMap<Connection<?>, Long> since = new LinkedHashMap<>();
        private final int max;
        private final int maxWhileYoung;
        private Connection<?> newest;

        Line(int max, int maxWhileYoung) {
            this.max = max;
            this.maxWhileYoung = maxWhileYoung;
        }

        /** Adds {@code connection} as the newest, if it is not waiting already; returns those to close, taken out. */
        List<Connection<?>> add(Connection<?> connection) {
            long now = System.nanoTime();
            if (since.putIfAbsent(connection, now) != null) {
                return List.of();
            }
            Connection<?> beforeNewest = newest;
            newest = connection;
            List<Connection<?>> closed = new ArrayList<>(0);
            Iterator<Map.Entry<Connection<?>, Long>> longest = since.entrySet().iterator();
            while (since.size() > max) {
                Map.Entry<Connection<?>, Long> next = longest.next();
                if (now - next.getValue() < GRACE_NANOS) {
                    break;
                }
                closed.add(next.getKey());
                longest.remove();
            }
            if (since.size() > maxWhileYoung && beforeNewest != null && since.remove(beforeNewest) != null) {
                closed.add(beforeNewest);
            }
            return closed;
        }

        void remove(Connection<?> connection) {
            since.remove(connection);
            if (newest == connection) {
                // Not kept reachable once it has left; a newest that has left closes none anyway.
                newest = null;
            }
        }
    }
}

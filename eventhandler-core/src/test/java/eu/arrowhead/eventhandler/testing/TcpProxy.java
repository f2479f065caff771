package eu.arrowhead.eventhandler.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP forwarder on a loopback port that a test can cut, hang and restore: how the tests take a real
 * database away from the server (an outage, or one that stops answering) and give it back, without stopping
 * the database itself. It can also lose one answer: a network that failed after the target had acted.
 */
public final class TcpProxy implements AutoCloseable {
    private final int port;
    private final InetSocketAddress target;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket listener;
    /** Guarded by {@code this}: while set, no byte passes and new connections are not forwarded. */
    private boolean hung;
    /** Guarded by {@code this}: while set, new connections are closed at once. */
    private boolean cut;
    /** Guarded by {@code this}: the next bytes from the target close their connection instead of passing. */
    private boolean loseNextAnswer;
    private final AtomicInteger accepted = new AtomicInteger();

    public TcpProxy(String targetHost, int targetPort) {
        this.target = new InetSocketAddress(targetHost, targetPort);
        this.port = TestServer.portNoConnectionTakes();
        restore();
    }

    public int port() {
        return port;
    }

    /**
     * Closes every forwarded connection and closes new ones as they come: the target seems down. The port stays
     * bound: closed, another test's server could take it in the meantime (a {@code BindException} at the restore,
     * seen once in a whole suite).
     */
    public void cut() {
        synchronized (this) {
            cut = true;
        }
        flow();
        sockets.forEach(TcpProxy::closeQuietly);
        sockets.clear();
    }

    /**
     * Keeps every connection open but passes no more bytes, and accepts new connections without forwarding
     * them: the target seems to hang.
     */
    public synchronized void hang() {
        hung = true;
    }

    /** Accepts and forwards connections again, on the same port; after {@link #hang}, lets the bytes through. */
    public void restore() {
        synchronized (this) {
            cut = false;
        }
        if (listener != null) {
            flow();
            return;
        }
        try {
            ServerSocket socket = new ServerSocket();
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            listener = socket;
            Thread acceptor = new Thread(() -> accept(socket), "tcp-proxy-" + port);
            acceptor.setDaemon(true);
            acceptor.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The next bytes the target sends, on any connection, do not reach the client: both ends of that
     * connection are closed instead. The request reached the target, and its answer is lost.
     */
    public synchronized void loseNextAnswer() {
        loseNextAnswer = true;
    }

    /** Connections accepted from clients. */
    public int accepted() {
        return accepted.get();
    }

    private synchronized boolean takeLostAnswer() {
        boolean lose = loseNextAnswer;
        loseNextAnswer = false;
        return lose;
    }

    private synchronized boolean isCut() {
        return cut;
    }

    private synchronized void flow() {
        hung = false;
        notifyAll();
    }

    private synchronized void awaitFlow() throws IOException {
        try {
            while (hung) {
                wait();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while hung", e);
        }
    }

    private void accept(ServerSocket socket) {
        while (!socket.isClosed()) {
            try {
                Socket client = socket.accept();
                accepted.incrementAndGet();
                sockets.add(client);
                awaitFlow();
                if (isCut()) {
                    closeQuietly(client);
                    sockets.remove(client);
                }
                if (client.isClosed()) {
                    continue;
                }
                Socket server = new Socket();
                sockets.add(server);
                try {
                    server.connect(target, 5_000);
                } catch (IOException e) {
                    closeQuietly(client);
                    closeQuietly(server);
                    continue;
                }
                pump(client, server, false);
                pump(server, client, true);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to, boolean answers) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    awaitFlow();
                    if (answers && takeLostAnswer()) {
                        return; // closes both below: the client never sees the answer
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side went away: close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "tcp-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        cut();
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}

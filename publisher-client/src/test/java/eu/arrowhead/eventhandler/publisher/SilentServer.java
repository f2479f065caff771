package eu.arrowhead.eventhandler.publisher;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A socket that accepts connections and then neither reads nor answers: a server that hangs, or a network
 * that lost the answer. It counts the connections.
 */
final class SilentServer implements AutoCloseable {
    private final ServerSocket listener;
    private final AtomicInteger accepted = new AtomicInteger();
    private final Queue<Socket> held = new ConcurrentLinkedQueue<>();

    SilentServer() throws IOException {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    held.add(listener.accept());
                    accepted.incrementAndGet();
                }
            } catch (IOException closed) {
                // the test is over
            }
        }, "silent-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + listener.getLocalPort());
    }

    /** Connections accepted so far. */
    int accepted() {
        return accepted.get();
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket socket : held) {
            socket.close();
        }
    }
}

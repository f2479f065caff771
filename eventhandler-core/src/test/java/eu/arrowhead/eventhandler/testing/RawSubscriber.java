package eu.arrowhead.eventhandler.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * An SSE subscriber on a bare socket: it sends the request and then reads only when told to, which is how
 * the tests stand in for a stalled client, or for a thousand idle ones without a thread each.
 */
public final class RawSubscriber implements AutoCloseable {
    private final Socket socket;
    private final StringBuilder received = new StringBuilder();

    private RawSubscriber(Socket socket) {
        this.socket = socket;
    }

    /**
     * Opens a subscription.
     *
     * @param receiveBuffer the socket's receive buffer in bytes (small: a stalled client fills up fast), or 0
     */
    public static RawSubscriber open(int port, String query, int receiveBuffer) {
        Socket socket = connect(port, receiveBuffer);
        return send(socket, "GET /eventhandler/events" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\n\r\n");
    }

    /** Opens a connection and writes {@code bytes} (characters taken as bytes) in one go: a stream's request first. */
    public static RawSubscriber openRaw(int port, String bytes) {
        return send(connect(port, 0), bytes);
    }

    private static Socket connect(int port, int receiveBuffer) {
        try {
            Socket socket = new Socket();
            if (receiveBuffer > 0) {
                socket.setReceiveBufferSize(receiveBuffer);
            }
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            return socket;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static RawSubscriber send(Socket socket, String bytes) {
        try {
            OutputStream out = socket.getOutputStream();
            out.write(bytes.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return new RawSubscriber(socket);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads until {@code text} has arrived; fails after the timeout. */
    public void awaitText(String text, int timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        while (received.indexOf(text) < 0) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new AssertionError("'" + text + "' did not arrive; got: " + received);
            }
            socket.setSoTimeout((int) left);
            int n = in.read(buffer);
            if (n < 0) {
                throw new AssertionError("stream ended before '" + text + "' arrived; got: " + received);
            }
            received.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
        }
    }

    /** What has arrived so far (by {@link #awaitText}), HTTP head and chunk sizes included. */
    public String received() {
        return received.toString();
    }

    /**
     * Reads and discards until the server closes the connection.
     *
     * @return whether it was closed (end of stream or reset) before the timeout
     */
    public boolean drainUntilClosed(int timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[65536];
        try {
            while (true) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    return false;
                }
                socket.setSoTimeout((int) left);
                if (in.read(buffer) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already gone
        }
    }
}

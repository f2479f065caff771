package eu.arrowhead.eventhandler.subscriber;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A bare HTTP server for what the real one never does: answer with a canned response per connection
 * (connection 0, 1, ...) and then keep the connection open without a word, or close it when the response
 * says {@code Connection: close}. Records each request's head and when it was accepted.
 */
final class RawHttpServer implements AutoCloseable {
    private final ServerSocket server;
    private final IntFunction<String> responses;
    private final List<String> requests = Collections.synchronizedList(new ArrayList<>());
    private final List<Long> acceptedNanos = Collections.synchronizedList(new ArrayList<>());
    private final List<Socket> connections = Collections.synchronizedList(new ArrayList<>());
    private final Thread acceptor;

    private RawHttpServer(IntFunction<String> responses) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.responses = responses;
        this.acceptor = new Thread(this::serve, "raw-http-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Starts answering connection {@code n} with {@code responses.apply(n)}. */
    static RawHttpServer start(IntFunction<String> responses) throws IOException {
        return new RawHttpServer(responses);
    }

    /** A 200 event stream starting with {@code body}, then silence. */
    static String eventStream(String body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n" + body;
    }

    /** A 200 event stream of {@code body}, after which the connection is closed. */
    static String endedEventStream(String body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + body;
    }

    /** An error with a JSON body, after which the connection is closed. */
    static String error(int status, String reason, String json, String... extraHeaders) {
        StringBuilder response = new StringBuilder("HTTP/1.1 " + status + " " + reason + "\r\n");
        for (String header : extraHeaders) {
            response.append(header).append("\r\n");
        }
        return response.append("Content-Type: application/json\r\nContent-Length: ")
                .append(json.getBytes(StandardCharsets.UTF_8).length)
                .append("\r\nConnection: close\r\n\r\n").append(json).toString();
    }

    URI baseUri() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    int accepted() {
        return acceptedNanos.size();
    }

    long acceptedNanos(int connection) {
        return acceptedNanos.get(connection);
    }

    /** The request heads received so far, request line first. */
    List<String> requests() {
        synchronized (requests) {
            return List.copyOf(requests);
        }
    }

    private void serve() {
        try {
            for (int n = 0; ; n++) {
                Socket socket = server.accept();
                acceptedNanos.add(System.nanoTime());
                connections.add(socket);
                requests.add(readHead(socket.getInputStream()));
                String response = responses.apply(n);
                socket.getOutputStream().write(response.getBytes(StandardCharsets.UTF_8));
                socket.getOutputStream().flush();
                if (response.contains("\r\nConnection: close\r\n")) {
                    socket.close();
                }
            }
        } catch (IOException closed) {
            // the server socket was closed: done
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (connections) {
            for (Socket socket : connections) {
                socket.close();
            }
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

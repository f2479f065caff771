package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.util.List;

/**
 * A subscriber that opens its stream and never reads from it, with a small receive buffer so that its
 * socket is full after a few events: the client that scenario S puts among healthy ones.
 */
final class StalledSubscriber implements PublishLoop.Subscription {
    private static final int RECEIVE_BUFFER_BYTES = 4096;

    private final Socket socket;

    private StalledSubscriber(Socket socket) {
        this.socket = socket;
    }

    static StalledSubscriber open(SseEndpoint endpoint, Deadline deadline) {
        Socket socket = new Socket();
        try {
            // Set before connecting: the window the server may fill is agreed in the handshake.
            socket.setReceiveBufferSize(RECEIVE_BUFFER_BYTES);
            socket.connect(endpoint.address(), deadline.remainingMillis());
            socket.getOutputStream().write(endpoint.request());
            return new StalledSubscriber(socket);
        } catch (IOException e) {
            close(socket);
            throw new BenchException("cannot open the stalled subscriber at " + endpoint.base() + ": " + e, e);
        }
    }

    /**
     * Ends that add a stalled subscriber, after the healthy ones, to every loop of {@code healthy}'s
     * subscribers.
     */
    static PublishLoop.Ends among(RawHttpEnds healthy) {
        return new PublishLoop.Ends() {
            @Override
            public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
                return healthy.subscribe(base, log, live);
            }

            @Override
            public PublishLoop.Subscription subscribeAll(URI base, List<DeliveryLog> logs,
                                                         Deadline live) {
                PublishLoop.Subscription subscribers = healthy.subscribeAll(base, logs, live);
                try {
                    return PublishLoop.Subscription.all(List.of(subscribers,
                            open(new SseEndpoint(base, PublishLoop.EVENT_TYPE), live)));
                } catch (RuntimeException e) {
                    subscribers.close();
                    throw e;
                }
            }

            @Override
            public PublishLoop.Publisher publisher(URI base) {
                return healthy.publisher(base);
            }
        };
    }

    /** Never fails: not reading is all it does. */
    @Override
    public void checkAlive() {
        // nothing to check
    }

    @Override
    public void close() {
        close(socket);
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing more to release
        }
    }
}

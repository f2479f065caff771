package eu.arrowhead.eventhandler.bench;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * A NATS server at both ends, through its Java client: each publish is followed by a flush, which returns
 * once the server has answered a ping sent after the message, so that a publish returns once the server
 * has the event, as our publish returns once its 200 is back; a plain subscriber. One subject per bench run.
 */
final class NatsEnds implements PublishLoop.Ends {
    private static final String PEER = "nats";
    private static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(10);

    private final String subjectPrefix = "eventhandler-bench." + UUID.randomUUID() + ".";

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        PeerReceiver receiver = new PeerReceiver(PEER, subjectPrefix, log);
        Connection connection = connect(base, Duration.ofMillis(live.remainingMillis()), (ignored, event) -> {
            if (event == ConnectionListener.Events.DISCONNECTED || event == ConnectionListener.Events.CLOSED) {
                receiver.failed(new IllegalStateException("connection " + event));
            }
        });
        try {
            connection.createDispatcher(message -> receiver.received(message.getSubject(), message.getData()))
                    .subscribe(subjectPrefix + PublishLoop.EVENT_TYPE);
            // The server handles a connection's messages in order: once it answers this, the SUB is in place.
            connection.flush(Duration.ofMillis(live.remainingMillis()));
        } catch (TimeoutException | InterruptedException | RuntimeException e) {
            close(connection);
            throw failure("cannot subscribe at " + base, e);
        }
        return receiver.subscription(() -> close(connection));
    }

    /** Many subscribers are read on the socket by one thread, as ours are: see {@link RawHttpEnds}. */
    @Override
    public PublishLoop.Subscription subscribeAll(URI base, List<DeliveryLog> logs, Deadline live) {
        if (logs.size() <= RawHttpEnds.MAX_READER_THREADS) {
            return PublishLoop.Ends.super.subscribeAll(base, logs, live);
        }
        return SubscriberFleet.open(new NatsFleetProtocol(address(base), subjectPrefix, logs), logs.size(), live);
    }

    private static InetSocketAddress address(URI base) {
        return new InetSocketAddress(base.getHost(), base.getPort());
    }

    @Override
    public PublishLoop.Publisher publisher(URI base) {
        Connection connection = connect(base, PUBLISH_TIMEOUT, (ignored, event) -> {
            // a lost connection shows as the next publish failing
        });
        return new PublishLoop.Publisher() {
            @Override
            public long publish(String eventType, String payload) {
                try {
                    connection.publish(subjectPrefix + eventType, payload.getBytes(StandardCharsets.UTF_8));
                    connection.flush(PUBLISH_TIMEOUT);
                } catch (TimeoutException | InterruptedException | RuntimeException e) {
                    throw failure("publish failed", e);
                }
                return Sends.NO_ID;
            }

            @Override
            public void close() {
                NatsEnds.close(connection);
            }
        };
    }

    /** Connects without reconnecting: a lost connection must show as a failure, not be bridged. */
    private static Connection connect(URI base, Duration timeout, ConnectionListener listener) {
        try {
            return Nats.connect(new Options.Builder().server(base.toString()).connectionTimeout(timeout)
                    .noReconnect().connectionListener(listener).build());
        } catch (IOException | InterruptedException e) {
            throw failure("cannot connect to " + base, e);
        }
    }

    private static void close(Connection connection) {
        try {
            connection.close();
        } catch (InterruptedException e) {
            throw failure("cannot close the NATS connection", e);
        }
    }

    /** {@code e} as the bench's failure; an interrupt stays set for the caller to see. */
    private static BenchException failure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return new BenchException(what + ": " + e, e);
    }
}

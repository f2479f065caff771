package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.function.Supplier;

/**
 * A broker scenario A measures beside the Event Handler, for scale: where it listens on this machine, and
 * the ends that publish and subscribe through it. A peer that is not running is skipped, not a failure.
 */
enum Peer {
    MOSQUITTO("mosquitto", URI.create("tcp://127.0.0.1:1883"), MqttEnds::new),
    NATS("nats", URI.create("nats://127.0.0.1:4222"), NatsEnds::new);

    private static final int CONNECT_TIMEOUT_MILLIS = 1000;

    private final String label;
    private final URI address;
    private final Supplier<PublishLoop.Ends> ends;

    Peer(String label, URI address, Supplier<PublishLoop.Ends> ends) {
        this.label = label;
        this.address = address;
        this.ends = ends;
    }

    String label() {
        return label;
    }

    /** The broker's URI, as its client library takes it: the base a loop's ends connect to. */
    URI address() {
        return address;
    }

    String hostPort() {
        return address.getHost() + ":" + address.getPort();
    }

    /** New ends through this broker, on a topic of their own. */
    PublishLoop.Ends ends() {
        return ends.get();
    }

    /** Whether a TCP connection to the broker opens within a second: the broker is running. */
    boolean reachable() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.getHost(), address.getPort()), CONNECT_TIMEOUT_MILLIS);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}

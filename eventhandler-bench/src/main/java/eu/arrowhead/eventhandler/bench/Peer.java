package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * A broker the latency scenarios measure beside the Event Handler, for scale: where it listens on this machine, and
 * the ends that publish and subscribe through it. A peer that is not running is skipped, not a failure.
 */
enum Peer {
    MOSQUITTO("mosquitto", URI.create("tcp://127.0.0.1:1883"), MqttEnds::new, "mosquitto"),
    NATS("nats", URI.create("nats://127.0.0.1:4222"), NatsEnds::new, "nats-server");

    private static final int CONNECT_TIMEOUT_MILLIS = 1000;

    private final String label;
    private final URI address;
    private final Supplier<PublishLoop.Ends> ends;
    private final String processName;

    /** @param processName the broker's command name, by which its process is found to read its resources */
    Peer(String label, URI address, Supplier<PublishLoop.Ends> ends, String processName) {
        this.label = label;
        this.address = address;
        this.ends = ends;
        this.processName = processName;
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

    /** The broker process's threads, memory and CPU time, when it runs on this machine. */
    ResourceSnapshot snapshot() {
        OptionalLong pid = ProcStatus.find(processName);
        return pid.isEmpty() ? ResourceSnapshot.UNKNOWN : ProcStatus.read(Long.toString(pid.getAsLong())).snapshot();
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

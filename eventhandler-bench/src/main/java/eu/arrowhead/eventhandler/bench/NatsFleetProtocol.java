package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A NATS subscriber written on the socket, for a {@link SubscriberFleet}: CONNECT, SUB, then PING; live once
 * the PONG comes back, since the server handles a connection's commands in order. The Java client takes
 * several threads per connection, too many for a thousand subscribers in one process.
 */
final class NatsFleetProtocol extends PeerFleetProtocol {
    private static final String MSG = "MSG ";
    private static final String PONG = "PONG";
    private static final String ERR = "-ERR";

    /** @param subjectPrefix what the subject puts before the event type; member i's messages go to log i */
    NatsFleetProtocol(InetSocketAddress address, String subjectPrefix, List<DeliveryLog> logs) {
        super(address, subjectPrefix, logs);
    }

    @Override
    public byte[] request(int member) {
        return ("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB " + prefix + PublishLoop.EVENT_TYPE
                + " 1\r\nPING\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public Stream stream(int member) {
        return new MessageStream() {
            @Override
            protected int message(byte[] buffer, int at, long nanos) {
                int lineEnd = lineEnd(buffer, at);
                if (lineEnd < 0) {
                    return -1;
                }
                String line = new String(buffer, at, lineEnd - at, StandardCharsets.UTF_8);
                int next = lineEnd + 2;
                if (line.startsWith(MSG)) {
                    // MSG <subject> <sid> [reply-to] <#bytes>
                    String[] parts = line.split(" ");
                    int size = Integer.parseInt(parts[parts.length - 1]);
                    if (next + size + 2 > buffer.length) {
                        return -1;
                    }
                    String payload = new String(buffer, next, size, StandardCharsets.UTF_8);
                    received(member, parts[1], payload, nanos);
                    return next + size + 2;
                }
                if (line.startsWith(PONG)) {
                    live = true;
                } else if (line.startsWith(ERR)) {
                    throw new BenchException("the NATS server answered " + line);
                }
                return next;
            }
        };
    }

    private static int lineEnd(byte[] buffer, int from) {
        for (int i = from; i + 1 < buffer.length; i++) {
            if (buffer[i] == '\r' && buffer[i + 1] == '\n') {
                return i;
            }
        }
        return -1;
    }
}

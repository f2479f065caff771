package eu.arrowhead.eventhandler.bench;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * An MQTT 3.1.1 subscriber at QoS 0 written on the socket, for a {@link SubscriberFleet}: CONNECT with a clean
 * session, then SUBSCRIBE; live once the SUBACK grants it. Eclipse Paho's client takes four threads per
 * connection, and opening a thousand of them took longer than the fan-out it was to measure.
 */
final class MqttFleetProtocol extends PeerFleetProtocol {
    private static final int CONNECT = 0x10;
    private static final int CONNACK = 0x20;
    private static final int PUBLISH = 0x30;
    private static final int SUBSCRIBE = 0x82;
    private static final int SUBACK = 0x90;
    private static final int PROTOCOL_LEVEL = 4;
    private static final int CLEAN_SESSION = 0x02;
    private static final int KEEP_ALIVE_SECONDS = 600;
    private static final int SUBACK_FAILURE = 0x80;

    private final String clientIdPrefix;

    /** @param topicPrefix what the topic puts before the event type; member i's messages go to log i */
    MqttFleetProtocol(InetSocketAddress address, String topicPrefix, List<DeliveryLog> logs, String clientIdPrefix) {
        super(address, topicPrefix, logs);
        this.clientIdPrefix = clientIdPrefix;
    }

    @Override
    public byte[] request(int member) {
        ByteArrayOutputStream connect = new ByteArrayOutputStream();
        string(connect, "MQTT");
        connect.write(PROTOCOL_LEVEL);
        connect.write(CLEAN_SESSION);
        connect.write(KEEP_ALIVE_SECONDS >> 8);
        connect.write(KEEP_ALIVE_SECONDS & 0xff);
        string(connect, clientIdPrefix + member);
        ByteArrayOutputStream subscribe = new ByteArrayOutputStream();
        subscribe.write(0);
        subscribe.write(1);
        string(subscribe, prefix + PublishLoop.EVENT_TYPE);
        subscribe.write(0);
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        packet(request, CONNECT, connect.toByteArray());
        packet(request, SUBSCRIBE, subscribe.toByteArray());
        return request.toByteArray();
    }

    @Override
    public Stream stream(int member) {
        return new MessageStream() {
            @Override
            protected int message(byte[] buffer, int at, long nanos) {
                int length = 0;
                int multiplier = 1;
                int at2 = at + 1;
                while (true) {
                    if (at2 >= buffer.length) {
                        return -1;
                    }
                    int digit = buffer[at2++] & 0xff;
                    length += (digit & 0x7f) * multiplier;
                    multiplier *= 128;
                    if ((digit & 0x80) == 0) {
                        break;
                    }
                }
                int end = at2 + length;
                if (end > buffer.length) {
                    return -1;
                }
                int type = buffer[at] & 0xf0;
                if (type == PUBLISH) {
                    int topicLength = ((buffer[at2] & 0xff) << 8) | (buffer[at2 + 1] & 0xff);
                    String topic = new String(buffer, at2 + 2, topicLength, StandardCharsets.UTF_8);
                    String payload = new String(buffer, at2 + 2 + topicLength, end - at2 - 2 - topicLength,
                            StandardCharsets.UTF_8);
                    received(member, topic, payload, nanos);
                } else if (type == SUBACK) {
                    if ((buffer[end - 1] & 0xff) == SUBACK_FAILURE) {
                        throw new BenchException("the MQTT broker refused the subscription");
                    }
                    live = true;
                } else if (type == CONNACK && buffer[at2 + 1] != 0) {
                    throw new BenchException("the MQTT broker refused the connection, return code " + buffer[at2 + 1]);
                }
                return end;
            }
        };
    }

    private static void string(ByteArrayOutputStream out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.write(bytes.length >> 8);
        out.write(bytes.length & 0xff);
        out.writeBytes(bytes);
    }

    private static void packet(ByteArrayOutputStream out, int header, byte[] body) {
        out.write(header);
        int length = body.length;
        do {
            int digit = length % 128;
            length /= 128;
            out.write(length > 0 ? digit | 0x80 : digit);
        } while (length > 0);
        out.writeBytes(body);
    }
}

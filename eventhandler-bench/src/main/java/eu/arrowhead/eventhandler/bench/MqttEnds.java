package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * An MQTT broker at both ends, through Eclipse Paho's synchronous client: each publish is QoS 1 and returns
 * once the broker's PUBACK is back, as our publish returns once its 200 is; the subscriber takes QoS 0, the
 * nearest to our SSE stream, which neither acknowledges nor redelivers. One topic per bench run.
 */
final class MqttEnds implements PublishLoop.Ends {
    private static final String PEER = "mosquitto";
    private static final int PUBLISH_QOS = 1;
    private static final int SUBSCRIBE_QOS = 0;
    private static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(10);
    private static final int MAX_INFLIGHT = 65_535;

    private final String topicPrefix = "eventhandler-bench/" + UUID.randomUUID() + "/";

    @Override
    public PublishLoop.Subscription subscribe(URI base, DeliveryLog log, Deadline live) {
        PeerReceiver receiver = new PeerReceiver(PEER, topicPrefix, log);
        MqttClient client = client(base);
        client.setCallback(new MqttCallback() {
            @Override
            public void connectionLost(Throwable cause) {
                receiver.failed(cause);
            }

            @Override
            public void messageArrived(String topic, MqttMessage message) {
                receiver.received(topic, message.getPayload());
            }

            @Override
            public void deliveryComplete(IMqttDeliveryToken token) {
                // the subscriber publishes nothing
            }
        });
        try {
            connect(client, live.remainingMillis());
            // Returns once the broker's SUBACK is back: from then on the subscription is live.
            client.subscribe(topicPrefix + PublishLoop.EVENT_TYPE, SUBSCRIBE_QOS);
        } catch (MqttException e) {
            throw closedAfter(client, new BenchException("cannot subscribe at " + base + ": " + e, e));
        }
        return receiver.subscription(() -> close(client));
    }

    /** Many subscribers are read on the socket by one thread, as ours are: see {@link RawHttpEnds}. */
    @Override
    public PublishLoop.Subscription subscribeAll(URI base, List<DeliveryLog> logs, Deadline live) {
        if (logs.size() <= RawHttpEnds.MAX_READER_THREADS) {
            return PublishLoop.Ends.super.subscribeAll(base, logs, live);
        }
        return SubscriberFleet.open(new MqttFleetProtocol(address(base), topicPrefix, logs, "eventhandler-bench-" + UUID.randomUUID() + "-"), logs.size(), live);
    }

    private static InetSocketAddress address(URI base) {
        return new InetSocketAddress(base.getHost(), base.getPort());
    }

    @Override
    public PublishLoop.Publisher publisher(URI base) {
        MqttClient client = client(base);
        try {
            connect(client, PUBLISH_TIMEOUT.toMillis());
        } catch (MqttException e) {
            throw closedAfter(client, new BenchException("cannot connect to " + base + ": " + e, e));
        }
        return new PublishLoop.Publisher() {
            @Override
            public long publish(String eventType, String payload) {
                try {
                    // Paho's synchronous publish waits for the PUBACK.
                    client.publish(topicPrefix + eventType, payload.getBytes(StandardCharsets.UTF_8), PUBLISH_QOS,
                            false);
                } catch (MqttException e) {
                    throw new BenchException("publish failed: " + e, e);
                }
                return Sends.NO_ID;
            }

            @Override
            public void close() {
                MqttEnds.close(client);
            }
        };
    }

    /** A client that keeps no state on disk: Paho's default persistence writes files into the working directory. */
    private static MqttClient client(URI base) {
        try {
            return new MqttClient(base.toString(), MqttClient.generateClientId(), new MemoryPersistence());
        } catch (MqttException e) {
            throw new BenchException("cannot make an MQTT client for " + base + ": " + e, e);
        }
    }

    /** Connects with a clean session and no automatic reconnect: a lost connection must show as a failure. */
    private static void connect(MqttClient client, long timeoutMillis) throws MqttException {
        // Every blocking call of the client (connect, subscribe, publish) waits at most this long.
        client.setTimeToWait(timeoutMillis);
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        options.setAutomaticReconnect(false);
        // Paho frees an in-flight slot only after the waiting publish has returned, so even one publish at a
        // time can find the default 10 slots taken ("Too many publishes in progress"); a publisher here never
        // has more than one publish in flight, so the limit only has to be out of the way.
        options.setMaxInflight(MAX_INFLIGHT);
        options.setConnectionTimeout((int) Math.max(1, timeoutMillis / 1000));
        client.connect(options);
    }

    /** Closes a client that failed, keeping the failure as what is reported. */
    private static BenchException closedAfter(MqttClient client, BenchException failure) {
        try {
            close(client);
        } catch (BenchException e) {
            failure.addSuppressed(e);
        }
        return failure;
    }

    private static void close(MqttClient client) {
        try {
            if (client.isConnected()) {
                // No quiescing: publishes are synchronous, so nothing is in flight by now.
                client.disconnect(0);
            }
            client.close();
        } catch (MqttException e) {
            throw new BenchException("cannot close the MQTT client: " + e, e);
        }
    }
}

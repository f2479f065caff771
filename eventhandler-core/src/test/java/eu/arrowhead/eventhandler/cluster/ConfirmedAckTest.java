package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import io.nats.client.Connection;
import io.nats.client.ErrorListener;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An acknowledgement sent while the cursor has no leader (its server was killed, the others still elect one) is
 * lost if sent once: the cursor would hold the event as in flight for its whole acknowledgement wait, then send it
 * again. Sent until confirmed, it reaches the new leader: with three real nats-servers, the cursor's leader killed.
 */
class ConfirmedAckTest {
    private static final Duration ACK_WAIT = Duration.ofSeconds(60);
    @TempDir
    Path directory;

    private static Connection connect(String url) throws Exception {
        return Nats.connect(new Options.Builder().server(url).maxReconnects(-1).reconnectWait(Duration.ofMillis(100))
                .errorListener(new ErrorListener() { }).build());
    }

    @Test
    void anAcknowledgementSentWhileTheCursorHasNoLeaderReachesTheNextLeader() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 3)) {
            int leader;
            try (Connection setup = connect(nats.urls())) {
                JetStreamManagement management = setup.jetStreamManagement();
                management.addStream(StreamConfiguration.builder().name("ACKS").subjects("acks").replicas(3)
                        .storageType(StorageType.File).build());
                management.addOrUpdateConsumer("ACKS", ConsumerConfiguration.builder().durable("cursor")
                        .filterSubject("acks").ackPolicy(AckPolicy.Explicit).ackWait(ACK_WAIT).build());
                leader = Integer.parseInt(management.getConsumerInfo("ACKS", "cursor").getClusterInfo().getLeader()
                        .substring(1));
            }
            try (Connection connection = connect(nats.url((leader + 1) % 3))) {
                JetStreamManagement management = connection.jetStreamManagement();
                connection.jetStream().publish("acks", new byte[] {1});
                JetStreamSubscription pull = connection.jetStream().subscribe("acks",
                        PullSubscribeOptions.bind("ACKS", "cursor"));
                List<Message> fetched = pull.fetch(1, Duration.ofSeconds(10));
                assertEquals(1, fetched.size());

                nats.kill(leader);
                new ConfirmedAck(connection, ACK_WAIT).ack(fetched.get(0).getReplyTo());

                Await.until("the acknowledgement to reach the cursor's next leader", Duration.ofSeconds(30), () -> {
                    try {
                        return management.getConsumerInfo("ACKS", "cursor").getNumAckPending() == 0;
                    } catch (Exception e) {
                        return false; // no leader yet
                    }
                });
            }
        }
    }
}

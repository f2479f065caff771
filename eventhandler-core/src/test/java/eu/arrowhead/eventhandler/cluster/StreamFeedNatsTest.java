package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.RecordingSubscriber;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import eu.arrowhead.eventhandler.topic.Hub;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.Nats;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The feed against a real nats-server and the real client: what jnats counts as queued decides whether an event is
 * held for the ones behind it, so an event published alone must reach the hub at once, and a burst whole, in order.
 * No node's tick runs here to hand over an event held for nothing, but for the burst.
 */
class StreamFeedNatsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Generous: without a tick, an event held until the next would never come. */
    private static final Duration ALONE_WITHIN = Duration.ofSeconds(2);

    @TempDir
    Path directory;

    private final StreamMessages messages = new StreamMessages("feed.events");
    private final Hub hub = new Hub(10, 10_000, 1 << 20, 1 << 24, new StreamFedLog());
    private final RecordingSubscriber subscriber = new RecordingSubscriber();

    @Test
    void anEventPublishedAloneReachesTheHubAtOnceAndABurstWholeInOrder() throws Exception {
        hub.subscribe(Set.of("a"), subscriber, OptionalLong.empty());
        try (NatsCluster nats = NatsCluster.start(directory, 1);
             Connection connection = Nats.connect(nats.urls())) {
            connection.jetStreamManagement().addStream(StreamConfiguration.builder().name("FEED")
                    .subjects("feed.events.>").storageType(StorageType.Memory).build());
            JetStream jetStream = connection.jetStream();
            try (StreamFeed feed = StreamFeed.start(connection, jetStream, "FEED", messages, hub)) {
                for (long id = 1; id <= 300; id++) {
                    jetStream.publish(messages.encode(SampleEvents.incoming("a", "alone-" + id), null, 0));
                    long expected = id;
                    Await.until("event " + id + " to reach the hub on its own", ALONE_WITHIN,
                            () -> hub.lastId() == expected);
                }

                List<CompletableFuture<PublishAck>> burst = new ArrayList<>();
                for (int i = 0; i < 3_000; i++) {
                    burst.add(jetStream.publishAsync(messages.encode(SampleEvents.incoming("a", "burst-" + i), null,
                            0)));
                }
                for (CompletableFuture<PublishAck> ack : burst) {
                    ack.join();
                }
                // Flow control may follow the burst's last event: the node's tick would hand that event over.
                Await.until("the burst to reach the hub", WAIT, Duration.ofMillis(200), () -> {
                    feed.handOverHeld();
                    return hub.lastId() == 3_300;
                });
            }
        }
        assertEquals(LongStream.rangeClosed(1, 3_300).boxed().toList(), subscriber.ids());
    }
}

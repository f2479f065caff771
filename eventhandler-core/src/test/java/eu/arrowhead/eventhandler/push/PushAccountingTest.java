package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.Publication;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What push subscriptions are charged against push.total-max-bytes comes back whole on every path: a
 * subscription the hub refuses, an update, a removal, and the events queued or in flight when it goes.
 */
class PushAccountingTest {
    private final EventValidator validator = new EventValidator(65_536, Duration.ofMinutes(2));
    private final PushConfig config = ConfigLoader.withOverrides(Map.of("push.sender-threads", "1")).push();
    /** Room for one topic: a subscription to a second event type is refused by the hub. */
    private final LocalHub local = new LocalHub(1, 10, 1 << 20, 1 << 20, EventJournal.NONE);
    private final Hub hub = local.hub();

    @Test
    void everyChargeIsGivenBackOnEveryPath() throws Exception {
        // Takes connections into its backlog and never answers: the POST in flight and the queue stay put.
        try (PushSender sender = new PushSender(config, null, new TargetPolicy(config, new OwnEndpoint(0)));
             ServerSocket hanging = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            PushSubscriptions subscriptions = new PushSubscriptions(hub, SubscriptionStore.NONE, Authorizer.INSECURE,
                    sender, config);
            subscriptions.subscribe(request("first", "level", hanging.getLocalPort(), 0));
            long one = subscriptions.subscriptionBytes();
            assertTrue(one > 0);

            assertThrows(UnavailableException.class,
                    () -> subscriptions.subscribe(request("second", "other-topic", hanging.getLocalPort(), 0)));
            assertEquals(one, subscriptions.subscriptionBytes(), "a subscription the hub refused is charged nothing");

            subscriptions.subscribe(request("first", "level", hanging.getLocalPort(), 50));
            long larger = subscriptions.subscriptionBytes();
            assertTrue(larger > one, "an update with a larger filter is charged more");
            subscriptions.subscribe(request("first", "level", hanging.getLocalPort(), 0));
            assertEquals(one, subscriptions.subscriptionBytes(), "and back");

            for (int i = 0; i < 5; i++) {
                publish("event " + i);
            }
            Await.until("the events are queued or in flight", Duration.ofSeconds(10),
                    () -> subscriptions.queuedBytes() > 0 && subscriptions.queued() == 4);
            assertTrue(subscriptions.unsubscribe("level", "first", null, null));
            assertEquals(0, subscriptions.subscriptionBytes());
            assertEquals(0, subscriptions.queuedBytes(), "what was queued and what was in flight went back too");
        }
    }

    private void publish(String payload) {
        local.publish(List.of(validator.validate(new EventPublishRequest("level", payload, null, null, null),
                Instant.now(), "")), Publication.NONE);
    }

    private static SubscriptionRequest request(String subscriber, String eventType, int port, int filterEntries)
            throws Exception {
        StringBuilder filter = new StringBuilder();
        for (int i = 0; i < filterEntries; i++) {
            filter.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
        }
        return JsonMapper.get().readValue("{\"eventType\":\"" + eventType + "\",\"notifyUri\":\"/n\","
                + "\"matchMetaData\":" + (filterEntries > 0) + ",\"filterMetaData\":{" + filter + "},"
                + "\"subscriberSystem\":{\"systemName\":\"" + subscriber + "\",\"address\":\"127.0.0.1\",\"port\":"
                + port + "}}", SubscriptionRequest.class);
    }
}

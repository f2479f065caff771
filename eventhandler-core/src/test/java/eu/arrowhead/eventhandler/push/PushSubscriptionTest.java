package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SubscriptionResponse;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.api.SystemResponse;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.Publication;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The sources a subscription takes events from: those it asks for, narrowed to the publishers the
 * authorizer allows, recomputed on an authorization update. A real hub and sender deliver to a stand-in.
 */
class PushSubscriptionTest {
    private final EventValidator validator = new EventValidator(65_536, Duration.ofMinutes(2));

    @Test
    void effectiveSourcesAreTheAskedOnesThatAreAuthorized() throws Exception {
        PushSubscription asking = PushSubscription.validate(JsonMapper.get().readValue(
                "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},"
                        + "\"notifyUri\":\"n\",\"sources\":[{\"systemName\":\"A\"},{\"systemName\":\"b\"}]}",
                SubscriptionRequest.class), 1, Instant.EPOCH, Instant.EPOCH);
        assertEquals(Set.of("a", "b"), asking.effectiveSources(Optional.empty()));
        assertEquals(Set.of("b"), asking.effectiveSources(Optional.of(Set.of("b", "c"))));
        assertEquals(Set.of(PushSubscription.NO_SOURCE), asking.effectiveSources(Optional.of(Set.of("c"))));
        SubscriptionResponse none = asking.toResponse(asking.effectiveSources(Optional.of(Set.of("c"))), null);
        assertEquals(List.of(), none.sources());
        assertEquals("http://h:1/n", asking.target(false).toString());
        assertEquals("https://h:1/n", asking.target(true).toString());
    }

    @Test
    void anAuthorizationUpdateNarrowsWhatIsPushed() throws Exception {
        AtomicReference<Optional<Set<String>>> allowed = new AtomicReference<>(Optional.empty());
        List<Runnable> listeners = new CopyOnWriteArrayList<>();
        Authorizer authorizer = new Authorizer() {
            @Override
            public Optional<Set<String>> authorizedPublishers(String subscriberSystemName) {
                return allowed.get();
            }

            @Override
            public void authorizationChanged() {
                listeners.forEach(Runnable::run);
            }

            @Override
            public void onAuthorizationChange(Runnable listener) {
                listeners.add(listener);
            }
        };
        PushConfig config = ConfigLoader.withOverrides(Map.of("push.sender-threads", "1")).push();
        LocalHub local = new LocalHub(10, 10, 1 << 20, 1 << 20, EventJournal.NONE);
        Hub hub = local.hub();
        try (PushSender sender = new PushSender(config, null, new TargetPolicy(config, new OwnEndpoint(0)));
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            PushSubscriptions subscriptions = new PushSubscriptions(hub, SubscriptionStore.NONE, authorizer, sender,
                    config);
            SubscriptionResponse created = subscriptions.subscribe(JsonMapper.get().readValue(
                    subscriber.subscription("consumer", "level", ""), SubscriptionRequest.class));
            assertNull(created.sources());

            publish(local, "from-a", "a");
            subscriber.awaitEvents(1);
            allowed.set(Optional.of(Set.of("b")));
            authorizer.authorizationChanged();
            assertEquals(List.of("b"), subscriptions.get(created.id()).orElseThrow().sources().stream()
                    .map(SystemResponse::systemName).toList());
            publish(local, "second-from-a", "a");
            publish(local, "from-b", "b");
            subscriber.awaitEvents(2);
            assertEquals(List.of("from-a", "from-b"), subscriber.payloads());
        }
    }

    private void publish(LocalHub local, String payload, String source) {
        local.publish(List.of(validator.validate(new EventPublishRequest("level", payload, null,
                SystemRequest.named(source), null), Instant.now(), "")), Publication.NONE);
    }
}

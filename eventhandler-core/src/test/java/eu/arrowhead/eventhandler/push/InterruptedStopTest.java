package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.store.DatabaseEventStore;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.topic.Publication;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stop whose thread carries an interrupt (the node's parts stop one after another, and one interrupted earlier
 * leaves the flag set for the rest) still saves every push cursor exactly, so no acknowledged event is sent again
 * after the restart; the flag is set again for the parts stopped after. A real H2 log, hub, sender and subscriber.
 */
class InterruptedStopTest {
    private final EventValidator validator = new EventValidator(65_536, Duration.ofMinutes(2));

    @TempDir
    Path directory;

    @Test
    void anInterruptedStopStillSavesWhereTheSubscriberIs() throws Exception {
        EventHandlerConfig config = ConfigLoader.withOverrides(Map.of("store.mode", "async",
                "store.url", "jdbc:h2:file:" + directory.resolve("log"), "store.user", "sa", "store.password", "",
                "store.id-mark-file", directory.resolve("log.ids").toString(), "push.sender-threads", "1"));
        DatabaseEventStore store = DatabaseEventStore.open(config);
        try (StandInSubscriber subscriber = StandInSubscriber.healthy();
             PushSender sender = new PushSender(config.push(), null,
                     new TargetPolicy(config.push(), new OwnEndpoint(0)))) {
            LocalHub local = new LocalHub(10, 100, 1 << 20, 1 << 20, store);
            LogCursors cursors = LogCursors.open(local.hub(), local.log(), store, sender, config.push(), 100);
            PushSubscriptions subscriptions = cursors.subscriptions(new Authorizer() {
            });
            long id = subscriptions.subscribe(JsonMapper.get().readValue(
                    subscriber.subscription("consumer", "reading", ""), SubscriptionRequest.class)).id();
            long last = 0;
            for (int i = 0; i < 20; i++) {
                last = local.publish(List.of(validator.validate(new EventPublishRequest("reading", "e" + i, null,
                        SystemRequest.named("sensor"), null), Instant.now(), "")), Publication.NONE);
            }
            subscriber.awaitEvents(20);
            // Each 200 is acknowledged once its POST has ended.
            assertTrue(sender.awaitIdle(Duration.ofSeconds(10)), "the last POST ended");

            Thread.currentThread().interrupt();
            cursors.close();
            assertTrue(Thread.interrupted(), "the interrupt is set again for what stops after");

            assertEquals(Map.of(id, last), store.loadCursors(), "the cursor is where the subscriber's 200s put it");
        } finally {
            Thread.interrupted();
            store.close();
        }
    }
}

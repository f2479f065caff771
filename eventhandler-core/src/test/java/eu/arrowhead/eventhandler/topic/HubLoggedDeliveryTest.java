package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.api.TopicStats;
import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.testing.StreamFedLog;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Events whose ids the log gives (cluster mode), handed to the hub in id order by the log's reader. */
class HubLoggedDeliveryTest {

    private static IncomingEvent event(String type) {
        return new IncomingEvent(type, type, null, Map.of(), System.currentTimeMillis(),
                EventEncoding.withIdZero(type, "p", null, null, Instant.now().toString()));
    }

    @Test
    void eventsOfTopicsPastTheLimitAdvanceTheSequenceButMakeNoTopic() {
        Hub hub = new Hub(2, 10, 1 << 20, 1 << 20, new StreamFedLog());
        hub.deliver(5, List.of(event("one")), Publication.NONE);
        hub.deliver(9, List.of(event("two")), Publication.NONE);
        hub.deliver(12, List.of(event("three")), Publication.NONE);
        hub.deliver(12, List.of(event("one")), Publication.NONE);

        assertEquals(List.of("one", "two"), hub.stats().stream().map(TopicStats::eventType).toList());
        assertEquals(12, hub.lastId());
        assertEquals(1, hub.stats().get(0).published(), "an id at or below the last one is not delivered again");
    }

    @Test
    void aResumeAheadOfThisNodeIsRefusedForNow() {
        Hub hub = new Hub(10, 10, 1 << 20, 1 << 20, new StreamFedLog());
        hub.deliver(3, List.of(event("ahead")), Publication.NONE);
        Subscriber subscriber = new Subscriber() {
            @Override
            public SubscriberFilter filter() {
                return SubscriberFilter.NONE;
            }

            @Override
            public void offer(PublishedEvent event, Publication publication) {
            }
        };
        UnavailableException refused = assertThrows(UnavailableException.class,
                () -> hub.subscribe(Set.of("ahead"), subscriber, OptionalLong.of(4)));
        assertTrue(refused.getMessage().contains("not yet received event 4"), refused.getMessage());
        assertEquals(3, hub.subscribe(Set.of("ahead"), subscriber, OptionalLong.of(3)).liveAfterId());
    }
}

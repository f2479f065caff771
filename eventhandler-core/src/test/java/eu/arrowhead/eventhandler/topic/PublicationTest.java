package eu.arrowhead.eventhandler.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.store.EventJournal;
import eu.arrowhead.eventhandler.testing.LocalHub;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a publish carries from its subscribers' offers to its publishing thread, to be done after the hub's lock. */
class PublicationTest {
    private final LocalHub local = new LocalHub(10, 100, 1 << 20, 1 << 20, EventJournal.NONE);
    private final Hub hub = local.hub();
    private final List<String> done = new ArrayList<>();

    /**
     * The work an offer leaves waits until the publishing thread runs it, in the order it was left, on that thread,
     * with the hub's lock free: another thread can take it meanwhile.
     */
    @Test
    void workLeftByOffersRunsOnThePublishingThreadAfterTheHubsLock() {
        hub.subscribe(Set.of("a"), leavingWork("first"), OptionalLong.empty());
        hub.subscribe(Set.of("a"), leavingWork("second"), OptionalLong.empty());
        Publication publication = Publication.queued();
        local.publish(SampleEvents.batch("a", "x", 2), publication);
        assertEquals(List.of(), done, "nothing runs under the hub's lock");

        publication.runDeferred();

        String me = Thread.currentThread().getName();
        assertEquals(List.of("first 1 on " + me + ", lock free", "second 1 on " + me + ", lock free",
                "first 2 on " + me + ", lock free", "second 2 on " + me + ", lock free"), done);
        publication.runDeferred();
        assertEquals(4, done.size(), "what ran is not run again");
    }

    /** One subscriber's work that fails leaves the others' to run, and fails nothing: the publish was accepted. */
    @Test
    void workThatFailsDoesNotKeepTheRestFromRunning() {
        Publication publication = Publication.queued();
        publication.afterHubLock(() -> done.add("one"));
        publication.afterHubLock(() -> {
            throw new IllegalStateException("a drain that failed");
        });
        publication.afterHubLock(() -> done.add("three"));

        publication.runDeferred();

        assertEquals(List.of("one", "three"), done);
    }

    /** Outside a publish (a heartbeat, a durable journal's delivery) nobody takes work later: it runs at once. */
    @Test
    void outsideAPublishWorkRunsAtOnce() {
        assertFalse(Publication.NONE.defers());
        Publication.NONE.afterHubLock(() -> done.add("now"));
        assertEquals(List.of("now"), done);
        assertTrue(Publication.queued().defers());
        assertFalse(Publication.queued().blocking());
        assertTrue(Publication.blockingWrites(5).blocking());
        assertEquals(5, Publication.blockingWrites(5).blockingWriteTimeoutNanos());
    }

    /** A subscriber that, like a stream's queue, leaves its work to the publishing thread. */
    private Subscriber leavingWork(String name) {
        return new Subscriber() {
            @Override
            public SubscriberFilter filter() {
                return SubscriberFilter.NONE;
            }

            @Override
            public void offer(PublishedEvent event, Publication publication) {
                publication.afterHubLock(() -> done.add(name + " " + event.id() + " on "
                        + Thread.currentThread().getName() + (lockFree() ? ", lock free" : ", under the lock")));
            }
        };
    }

    /** Whether another thread can take the hub's lock now. */
    private boolean lockFree() {
        try {
            CompletableFuture.supplyAsync(hub::lastId).get(10, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            return false;
        }
    }
}

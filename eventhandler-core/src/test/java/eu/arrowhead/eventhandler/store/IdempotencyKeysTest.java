package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class IdempotencyKeysTest {
    private static final String PATH = "/eventhandler/publish";
    private static final byte[] BODY = "{\"eventType\":\"t\",\"payload\":\"p\"}".getBytes(StandardCharsets.UTF_8);
    private static final CompletableFuture<Void> COMMITTED = CompletableFuture.completedFuture(null);

    private final AtomicLong nanos = new AtomicLong();
    private final IdempotencyKeys keys = new IdempotencyKeys(Duration.ofSeconds(60), 3, nanos::get);

    private IdempotencyKeys.Claim claim(String scope, String key, String path, byte[] body) {
        return keys.claim(new PublishKey(scope, key, IdempotencyKeys.fingerprint(path, body)));
    }

    private IdempotencyKeys.Claim publish(String key, long firstId, int count) {
        IdempotencyKeys.Claim claim = claim("caller", key, PATH, BODY);
        assertTrue(claim.fresh(), key + " was known");
        claim.accepted(firstId, count, COMMITTED);
        return claim;
    }

    @Test
    void aRepeatWithinTheWindowIsAnsweredWithTheFirstIds() {
        publish("k", 41, 2);
        IdempotencyKeys.Claim repeat = claim("caller", "k", PATH, BODY);
        assertFalse(repeat.fresh());
        assertEquals(41, repeat.firstId());
        assertEquals(2, repeat.count());
    }

    @Test
    void aKeyIsForgottenWhenItsWindowEnds() {
        publish("k", 1, 1);
        nanos.addAndGet(Duration.ofSeconds(60).toNanos());
        assertTrue(claim("caller", "k", PATH, BODY).fresh());
        assertEquals(1, keys.size());
    }

    @Test
    void anotherCallersKeyIsAnotherKey() {
        publish("k", 1, 1);
        assertTrue(claim("another", "k", PATH, BODY).fresh());
    }

    @Test
    void theSameKeyForAnotherBodyOrPathIsA422() {
        publish("k", 1, 1);
        RequestException body = assertThrows(RequestException.class,
                () -> claim("caller", "k", PATH, "{}".getBytes(StandardCharsets.UTF_8)));
        assertEquals(422, body.status());
        RequestException path = assertThrows(RequestException.class,
                () -> claim("caller", "k", PATH + "/batch", BODY));
        assertEquals(422, path.status());
    }

    @Test
    void aRepeatWhileTheFirstIsHandledOrUncommittedIsToldToAskAgain() {
        IdempotencyKeys.Claim first = claim("caller", "k", PATH, BODY);
        assertThrows(UnavailableException.class, () -> claim("caller", "k", PATH, BODY));

        CompletableFuture<Void> commit = new CompletableFuture<>();
        first.accepted(7, 1, commit);
        first.failed(); // the commit did not come in time: the key must stay
        assertThrows(UnavailableException.class, () -> claim("caller", "k", PATH, BODY));

        commit.complete(null);
        assertEquals(7, claim("caller", "k", PATH, BODY).firstId());
    }

    @Test
    void aRequestRefusedBeforeItsIdsOrWhoseCommitFailedIsPublishedByTheRepeat() {
        claim("caller", "refused", PATH, BODY).failed();
        assertTrue(claim("caller", "refused", PATH, BODY).fresh());

        IdempotencyKeys.Claim first = claim("caller", "failed", PATH, BODY);
        first.accepted(9, 1, CompletableFuture.failedFuture(new UnavailableException("the store failed")));
        assertTrue(claim("caller", "failed", PATH, BODY).fresh());
    }

    @Test
    void pastTheMostKeysTheOldestAreForgottenAndCounted() {
        publish("a", 1, 1);
        publish("b", 2, 1);
        publish("c", 3, 1);
        publish("d", 4, 1);
        assertEquals(3, keys.size());
        assertEquals(1, keys.forgottenEarly());
        assertTrue(claim("caller", "a", PATH, BODY).fresh(), "the oldest key was kept");
        assertFalse(claim("caller", "d", PATH, BODY).fresh());
    }

    /**
     * Keys a journal kept from an earlier run are answered as before for what is left of their window, a later
     * publish under the same key answering for it; they still tell another request under the key (422).
     */
    @Test
    void keysTakenBackFromTheJournalAnswerForWhatIsLeftOfTheirWindow() {
        long fingerprint = IdempotencyKeys.fingerprint(PATH, BODY);
        long now = System.currentTimeMillis();
        keys.restore(List.of(
                new StoredKey(new PublishKey("caller", "reused", fingerprint), 5, 1, now - 55_000),
                new StoredKey(new PublishKey("caller", "old", fingerprint), 10, 3, now - 50_000),
                new StoredKey(new PublishKey("caller", "reused", fingerprint), 20, 2, now - 1_000)));
        assertEquals(2, keys.size());
        IdempotencyKeys.Claim batch = claim("caller", "old", PATH, BODY);
        assertFalse(batch.fresh());
        assertEquals(10, batch.firstId());
        assertEquals(3, batch.count());
        assertEquals(20, claim("caller", "reused", PATH, BODY).firstId());
        assertEquals(422, assertThrows(RequestException.class,
                () -> claim("caller", "old", PATH, "{}".getBytes(StandardCharsets.UTF_8))).status());

        nanos.addAndGet(Duration.ofSeconds(11).toNanos());
        assertTrue(claim("caller", "old", PATH, BODY).fresh(), "kept past its window");
        assertFalse(claim("caller", "reused", PATH, BODY).fresh());
    }

    @Test
    void aKeyIsOneToAHundredAndTwentyEightVisibleAsciiCharacters() {
        assertEquals(null, IdempotencyKeys.checkedKey(null));
        assertEquals("0b1e-4c", IdempotencyKeys.checkedKey("0b1e-4c"));
        assertEquals("x".repeat(128), IdempotencyKeys.checkedKey("x".repeat(128)));
        for (String bad : new String[] {"", "x".repeat(129), "a b", "é", "tab\t"}) {
            assertEquals(400, assertThrows(RequestException.class, () -> IdempotencyKeys.checkedKey(bad)).status(),
                    bad);
        }
    }
}

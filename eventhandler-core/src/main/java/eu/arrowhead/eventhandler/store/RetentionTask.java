package eu.arrowhead.eventhandler.store;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database log's upkeep, run on the store's retention thread: {@link #deleteExpired} deletes what the
 * retention settings no longer keep, {@link #forgetExpiredKeys} the {@code Idempotency-Keys} older than their
 * window, {@link #compactStore} keeps H2's file in few chunks. A database that cannot be reached now is dealt with
 * next time.
 */
final class RetentionTask {
    private static final Logger LOG = LoggerFactory.getLogger(RetentionTask.class);
    /**
     * How often {@link #compactStore} looks whether a compaction is due ({@link EventDatabase#COMPACT_AFTER_COMMITS}):
     * at 1 000 commits a second, some 2.5 MB of chunk objects by then.
     */
    static final Duration COMPACT_EVERY = Duration.ofSeconds(10);

    private final EventDatabase database;
    private final RetentionQueries expired;
    private final PublishKeyTable keys;
    private final MissingRanges missing;
    private final Duration retentionAge;
    private final long retentionEvents;
    private final Duration checkEvery;
    private final Duration keyWindow;
    /** Whether retention said it cannot read past a damaged file: said once a run, not every check. */
    private boolean toldOfDamage;

    /**
     * @param retentionAge    events older than this are deleted; zero keeps them
     * @param retentionEvents only the newest this many events are kept; 0 keeps them all
     * @param checkEvery      how long after one retention run the next starts
     * @param keyWindow       {@code publish.idempotency-window-seconds}: keys older than this are deleted
     */
    RetentionTask(EventDatabase database, PublishKeyTable keys, MissingRanges missing, Duration retentionAge,
                  long retentionEvents, Duration checkEvery, Duration keyWindow) {
        this.database = database;
        this.expired = new RetentionQueries(database);
        this.keys = keys;
        this.missing = missing;
        this.retentionAge = retentionAge;
        this.retentionEvents = retentionEvents;
        this.checkEvery = checkEvery;
        this.keyWindow = keyWindow;
    }

    /**
     * The steps: retention at once and every {@code checkEvery}; keys every {@code checkEvery} too, or every window
     * if that is shorter, so that the table holds at most about two windows of keys; compaction every
     * {@link #COMPACT_EVERY}.
     */
    List<EventStore.PeriodicTask> tasks() {
        Duration keysEvery = keyWindow.compareTo(checkEvery) < 0 ? keyWindow : checkEvery;
        return List.of(new EventStore.PeriodicTask(this::deleteExpired, Duration.ZERO, checkEvery),
                new EventStore.PeriodicTask(this::forgetExpiredKeys, keysEvery, keysEvery),
                new EventStore.PeriodicTask(this::compactStore, COMPACT_EVERY, COMPACT_EVERY));
    }

    /**
     * Deletes the keyed publishes older than their window: no start loads them back. A chunk per transaction
     * ({@link PublishKeyTable#deleteBefore}), on a reader connection, so the writer never waits for it.
     */
    void forgetExpiredKeys() {
        try {
            long deleted = keys.deleteBefore(System.currentTimeMillis() - keyWindow.toMillis());
            if (deleted > 0) {
                LOG.debug("deleted {} Idempotency-Keys older than {} s", deleted, keyWindow.toSeconds());
            }
        } catch (RuntimeException e) {
            LOG.debug("expired Idempotency-Keys were not deleted: {}; they are next time", EventDatabase.describe(e));
        }
    }

    /** Deletes the prefix of the log that the retention settings no longer keep, and records it as gone. */
    void deleteExpired() {
        long upTo = 0;
        try {
            if (!retentionAge.isZero()) {
                upTo = expired.lastIdBefore(System.currentTimeMillis() - retentionAge.toMillis());
            }
            if (retentionEvents > 0) {
                upTo = Math.max(upTo, expired.idBeforeNewest(retentionEvents));
            }
            if (upTo == 0) {
                return;
            }
            // The watermark first: a resume between the deletes' commit and a later raise would get the
            // remaining events with no notice of those deleted before them.
            missing.deletedUpTo(upTo);
            long deleted = expired.deleteUpTo(upTo);
            if (deleted > 0) {
                LOG.info("retention deleted {} events up to id {}", deleted, upTo);
            }
        } catch (RuntimeException e) {
            if (!EmbeddedH2.isCorruption(e)) {
                LOG.warn("retention could not run: {}; it will run again", EventDatabase.describe(e));
            } else if (!toldOfDamage) {
                // The damage does not go away by itself: counting and deleting events across it fails every time.
                toldOfDamage = true;
                LOG.warn("retention cannot run while the event log's file is damaged ({}); it is tried again"
                        + " every check without saying so", EventDatabase.describe(e));
            } else {
                LOG.debug("retention could not run: {}", EventDatabase.describe(e));
            }
        }
    }

    /** Keeps H2's store file in few chunks ({@link EventDatabase#compactEmbeddedStoreIfDue}). */
    void compactStore() {
        try {
            database.compactEmbeddedStoreIfDue();
        } catch (RuntimeException e) {
            LOG.debug("the event store's file was not compacted: {}", e.toString());
        }
    }
}

package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The database log's reads: replays for resuming subscribers, which merge the database's rows with what the
 * {@link JournalWriter} has not written yet, and pages for {@code mgmt/events}. Blocking on the database;
 * thread-safe.
 */
final class JournalReader {
    /** Damaged ranges one read may find before it gives up for now (each found is stepped around from then on). */
    private static final int MAX_DAMAGE_PER_READ = 16;

    private final EventDatabase database;
    private final JournalWriter writer;
    private final long maxPageBytes;
    private final DamagedRanges damaged;

    /**
     * @param maxPageBytes about the most event JSON one page holds (a page has at least one event whatever its
     *                     size): what one read may add to the heap, bounded however large a page's count
     */
    JournalReader(EventDatabase database, JournalWriter writer, long maxPageBytes, DamagedRanges damaged) {
        this.database = database;
        this.writer = writer;
        this.maxPageBytes = maxPageBytes;
        this.damaged = damaged;
    }

    /**
     * See {@link eu.arrowhead.eventhandler.topic.EventLog#read}. A read that finds ids H2 cannot read records
     * them as damaged (and so missing: the page tells of them) and is read again around them.
     */
    LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        for (int found = 0; ; found++) {
            try {
                return readOnce(afterId, upToId, topicKeys, filter, maxEvents);
            } catch (DamagedRangeException e) {
                damaged.found(committedPart(e.range()), "a read");
                if (found == MAX_DAMAGE_PER_READ) {
                    throw new UnavailableException("the event store's file is damaged in many places; resume"
                            + " again later");
                }
            }
        }
    }

    /**
     * The writer's buffer is taken first and the database second: events leave the buffer only after their commit,
     * so each is seen exactly once.
     */
    private LogPage readOnce(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        JournalWriter.Unwritten unwritten = writer.unwritten(afterId, upToId, topicKeys);
        List<ReplayGap> gaps = unwritten.gaps();
        long committed = unwritten.committedUpTo();
        EventPages.Page page = new EventPages.Page(List.of(), afterId, false);
        // Events retention is deleting are behind the gap it reports, whether or not their rows are gone yet.
        long readAfter = Math.max(afterId, unwritten.deletedUpTo());
        if (readAfter < Math.min(upToId, committed)) {
            try {
                page = database.read(readAfter, Math.min(upToId, committed), topicKeys, maxEvents, maxPageBytes,
                        damaged);
            } catch (UnavailableException | DamagedRangeException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new UnavailableException("the event store cannot be read now ("
                        + EventDatabase.describe(e) + "); resume again later");
            }
        }
        boolean metaFilter = !filter.metaData().isEmpty();
        List<PublishedEvent> events = new ArrayList<>();
        long lastRead = afterId;
        for (EventRecord row : page.rows()) {
            PublishedEvent event = PublishedEvent.logged(row.id(), incoming(row, metaFilter));
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = row.id();
        }
        if (page.more()) {
            // Rows examined but not returned (damaged, or by bytes) lie behind the next page's start.
            lastRead = Math.max(lastRead, page.lastScanned());
        }
        // The database may hold more of the range than the page took (by count or by bytes): the buffered
        // events come after those, on a later page. A full page that reached upToId left nothing behind: the
        // stream goes on live rather than making the client reconnect for nothing.
        if (page.more() && lastRead < upToId) {
            return partPage(events, gaps, lastRead);
        }
        int room = maxEvents - page.rows().size();
        for (PublishedEvent event : unwritten.buffered()) {
            if (event.id() <= lastRead) {
                continue;
            }
            if (room-- == 0) {
                return partPage(events, gaps, lastRead);
            }
            if (filter.matches(event)) {
                events.add(event);
            }
            lastRead = event.id();
        }
        return new LogPage(events, gaps, true, upToId);
    }

    /** A page that ends at {@code lastRead}: the holes after it belong to the next page. */
    private static LogPage partPage(List<PublishedEvent> events, List<ReplayGap> gaps, long lastRead) {
        return new LogPage(events, gaps.stream().filter(gap -> gap.requestedAfterId() < lastRead).toList(), false,
                lastRead);
    }

    /** Turns a row back into the event the hub encoded; metadata are parsed only when a filter needs them. */
    static IncomingEvent incoming(EventRecord row, boolean withMetaData) {
        Map<String, String> metaData = Map.of();
        if (withMetaData) {
            try {
                metaData = EventEncoding.metaData(row.json());
            } catch (IOException e) {
                throw new IllegalStateException("event " + row.id() + " in the log is not valid JSON", e);
            }
        }
        return new IncomingEvent(row.eventType(), row.topicKey(), row.sourceKey(), metaData,
                row.timeStampMillis(), EventEncoding.fromStored(row.json()));
    }

    /** See {@link EventStore#query}. */
    EventStore.QueryPage query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId, int limit) {
        for (int found = 0; found < MAX_DAMAGE_PER_READ; found++) {
            try {
                return queryOnce(topicKeys, fromMillis, toMillis, afterId, limit);
            } catch (DamagedRangeException e) {
                damaged.found(committedPart(e.range()), "a read");
            }
        }
        throw new UnavailableException("the event store's file is damaged in many places; ask again later");
    }

    private EventStore.QueryPage queryOnce(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId,
                                           int limit) {
        EventPages.Page page;
        try {
            page = database.query(topicKeys, fromMillis, toMillis, afterId, limit, maxPageBytes, damaged);
        } catch (UnavailableException | DamagedRangeException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new UnavailableException("the event store cannot be read now (" + EventDatabase.describe(e)
                    + ")");
        }
        List<EventStore.LoggedEvent> events = page.rows().stream()
                .map(row -> new EventStore.LoggedEvent(row.id(), row.json())).toList();
        return new EventStore.QueryPage(events, page.more() ? OptionalLong.of(page.lastScanned()) : OptionalLong.empty());
    }

    /**
     * The part of a damaged range up to the last committed id: the probe steps over ids one at a time, and in a
     * damaged last page the ids not written yet are unreadable too, but they are not missing.
     */
    private MissingRanges.Range committedPart(MissingRanges.Range range) {
        long last = Math.min(range.last(), Math.max(range.first(), writer.committedUpTo()));
        return new MissingRanges.Range(range.first(), last);
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.subscriber.EventListener;
import eu.arrowhead.eventhandler.subscriber.SubscriptionListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** What one subscriber received: the ids and payloads in arrival order, when, and its connections and gaps. */
final class ReceivedIds implements EventListener, SubscriptionListener {
    private final List<Long> ids = new ArrayList<>();
    private final List<String> payloads = new ArrayList<>();
    private final List<Long> arrivalNanos = new ArrayList<>();
    private final List<ReplayGap> gaps = new ArrayList<>();
    private int connections;

    @Override
    public synchronized void onEvent(Event event) {
        ids.add(event.id());
        payloads.add(event.payload());
        arrivalNanos.add(System.nanoTime());
    }

    @Override
    public synchronized void onConnected() {
        connections++;
    }

    @Override
    public synchronized void onReplayGap(ReplayGap gap) {
        gaps.add(gap);
    }

    synchronized int connections() {
        return connections;
    }

    synchronized int gaps() {
        return gaps.size();
    }

    /** The replay-gap notices, in the order they came. */
    synchronized List<ReplayGap> gapNotices() {
        return List.copyOf(gaps);
    }

    synchronized List<String> payloads() {
        return List.copyOf(payloads);
    }

    /** The id each payload came with (every payload of these tests is unique). */
    synchronized Map<String, Long> idsByPayload() {
        Map<String, Long> byPayload = new HashMap<>();
        for (int i = 0; i < ids.size(); i++) {
            byPayload.put(payloads.get(i), ids.get(i));
        }
        return byPayload;
    }

    synchronized List<Long> ids() {
        return List.copyOf(ids);
    }

    synchronized boolean hasAll(Collection<Long> wanted) {
        return new HashSet<>(ids).containsAll(wanted);
    }

    /** Ids received more than once. */
    synchronized int duplicates() {
        return ids.size() - new HashSet<>(ids).size();
    }

    /** Whether every id is larger than the one before. */
    synchronized boolean increasing() {
        for (int i = 1; i < ids.size(); i++) {
            if (ids.get(i) <= ids.get(i - 1)) {
                return false;
            }
        }
        return true;
    }

    /** The ids of {@code wanted} never received. */
    synchronized List<Long> missing(Collection<Long> wanted) {
        Set<Long> got = new HashSet<>(ids);
        return wanted.stream().filter(id -> !got.contains(id)).sorted().toList();
    }

    /** How long after {@code sinceNanos} the first event arrived that arrived after it; empty if none did. */
    synchronized Optional<Duration> firstArrivalAfter(long sinceNanos) {
        return arrivalNanos.stream().filter(arrival -> arrival >= sinceNanos).findFirst()
                .map(arrival -> Duration.ofNanos(arrival - sinceNanos));
    }

    /**
     * The longest pause between two events that arrived after {@code sinceNanos}, or before the first of them; while
     * none has arrived since, the time since.
     */
    synchronized Duration longestPauseAfter(long sinceNanos) {
        long longest = 0;
        long previous = sinceNanos;
        for (long arrival : arrivalNanos) {
            if (arrival < sinceNanos) {
                continue;
            }
            longest = Math.max(longest, arrival - previous);
            previous = arrival;
        }
        return Duration.ofNanos(previous == sinceNanos ? System.nanoTime() - sinceNanos : longest);
    }
}

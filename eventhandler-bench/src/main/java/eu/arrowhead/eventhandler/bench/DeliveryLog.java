package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.http.JsonMapper;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

/**
 * What became of each event of a publish loop, by its sequence number (which is its payload): when it was
 * sent, which id publish answered, when and how often the subscriber got it and with which id.
 *
 * <p>The publisher's thread calls {@link #sent} and {@link #published}, the subscriber's thread
 * {@link #received}; {@link #outcome} may be read only after the subscriber's thread has stopped.
 */
final class DeliveryLog {
    private final String eventType;
    private final long[] sentNanos;
    private final long[] publishedIds;
    private final long[] receivedNanos;
    private final long[] receivedIds;
    private final int[] receipts;
    private final boolean[] overtaken;
    private final AtomicInteger delivered = new AtomicInteger();
    private long highestId = -1;

    DeliveryLog(String eventType, int events) {
        this.eventType = eventType;
        this.sentNanos = new long[events];
        this.publishedIds = new long[events];
        this.receivedNanos = new long[events];
        this.receivedIds = new long[events];
        this.receipts = new int[events];
        this.overtaken = new boolean[events];
    }

    void sent(int seq, long nanos) {
        sentNanos[seq] = nanos;
    }

    void published(int seq, long id) {
        publishedIds[seq] = id;
    }

    /** Records an event frame; one that this loop did not publish ends the subscriber with a failure. */
    void received(SseFrame frame) {
        received(parseId(frame), frame.event(), payloadOf(frame), frame.receivedNanos());
    }

    /** Records an event; one that this loop did not publish ends the subscriber with a failure. */
    void received(long id, String type, String payload, long nanos) {
        int seq = sequenceOf(type, payload);
        if (receipts[seq]++ == 0) {
            receivedNanos[seq] = nanos;
            receivedIds[seq] = id;
            // The broker's ids strictly increase, so a stream in order never goes back below its highest.
            overtaken[seq] = id < highestId;
            delivered.incrementAndGet();
        }
        highestId = Math.max(highestId, id);
    }

    /** The ids publish answered, by sequence number; read once the publisher's thread is done. */
    long[] publishedIds() {
        return publishedIds.clone();
    }

    /** Events received at least once so far. */
    int delivered() {
        return delivered.get();
    }

    /** What became of the events {@code from} (inclusive) to {@code to} (exclusive). */
    Outcome outcome(int from, int to) {
        int[] got = IntStream.range(from, to).filter(seq -> receipts[seq] > 0).toArray();
        return new Outcome(to - from, got.length,
                IntStream.range(from, to).map(seq -> Math.max(0, receipts[seq] - 1)).sum(),
                (int) IntStream.of(got).filter(seq -> overtaken[seq]).count(),
                (int) IntStream.of(got).filter(seq -> receivedIds[seq] != publishedIds[seq]).count(),
                IntStream.of(got).mapToLong(seq -> receivedNanos[seq] - sentNanos[seq]).toArray(),
                IntStream.of(got).mapToLong(seq -> sentNanos[seq] - sentNanos[from]).toArray());
    }

    private int sequenceOf(String type, String payload) {
        if (!eventType.equals(type)) {
            throw new BenchException("the subscriber got an event of type '" + type + "', not " + eventType);
        }
        try {
            int seq = Integer.parseInt(payload);
            if (seq >= 0 && seq < receipts.length) {
                return seq;
            }
        } catch (NumberFormatException e) {
            // reported below with the payload
        }
        throw new BenchException("the subscriber got an event this loop did not publish: payload " + payload);
    }

    private static String payloadOf(SseFrame frame) {
        try {
            return JsonMapper.get().readValue(frame.data(), Event.class).payload();
        } catch (JsonProcessingException e) {
            throw new BenchException("an event frame's data is not an event: " + frame.data());
        }
    }

    private static long parseId(SseFrame frame) {
        try {
            return Long.parseLong(frame.id());
        } catch (NumberFormatException e) {
            throw new BenchException("an event frame has no numeric id: id '" + frame.id() + "'");
        }
    }

    /**
     * @param events       events published
     * @param delivered    events received at least once
     * @param duplicated   receipts beyond the first
     * @param outOfOrder   events that arrived after one with a higher id
     * @param wrongId      events whose stream id differs from the id publish answered
     * @param latencyNanos send-to-parse time of each delivered event
     * @param sentNanos    when each delivered event was sent, from the send of the range's first event, in the
     *                     order of {@code latencyNanos}: to plot latency over the run
     */
    record Outcome(int events, int delivered, int duplicated, int outOfOrder, int wrongId, long[] latencyNanos,
                   long[] sentNanos) {

        int lost() {
            return events - delivered;
        }

        boolean clean() {
            return lost() == 0 && duplicated == 0 && outOfOrder == 0 && wrongId == 0;
        }

        /** What went wrong, for the failure line of a loop that is not {@link #clean}. */
        String problems() {
            return lost() + " lost, " + duplicated + " duplicated, " + outOfOrder + " out of order, " + wrongId
                    + " with another id than publish answered";
        }
    }
}

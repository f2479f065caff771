package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

/**
 * What one subscriber of a loop received, by sequence number (the number the payload starts with): when and
 * how often it got each event, and with which id.
 *
 * <p>Only the subscriber's thread calls {@link #received}; {@link #outcome} may be read only after that
 * thread has stopped and every publisher has finished.
 */
final class DeliveryLog {
    private final String eventType;
    private final Sends sends;
    private final long[] receivedNanos;
    private final long[] receivedIds;
    private final int[] receipts;
    private final boolean[] overtaken;
    private final int[] highestSeqByPublisher;
    private final AtomicInteger delivered = new AtomicInteger();
    private long highestId = Sends.NO_ID;

    DeliveryLog(String eventType, Sends sends) {
        this.eventType = eventType;
        this.sends = sends;
        this.receivedNanos = new long[sends.size()];
        this.receivedIds = new long[sends.size()];
        this.receipts = new int[sends.size()];
        this.overtaken = new boolean[sends.size()];
        this.highestSeqByPublisher = new int[sends.size() / sends.perPublisher()];
        Arrays.fill(highestSeqByPublisher, -1);
    }

    /** Records an event frame; one that this loop did not publish ends the subscriber with a failure. */
    void received(SseFrame frame) {
        received(parseId(frame), frame.event(), payloadOf(frame), frame.receivedNanos());
    }

    /**
     * Records an event; one that this loop did not publish ends the subscriber with a failure.
     *
     * @param id the broker's id, or {@link Sends#NO_ID}
     */
    void received(long id, String type, String payload, long nanos) {
        int seq = sequenceOf(type, payload);
        int publisher = sends.publisherOf(seq);
        if (receipts[seq]++ == 0) {
            receivedNanos[seq] = nanos;
            receivedIds[seq] = id;
            // One publisher's events must arrive in the order it sent them; and the broker's ids strictly
            // increase, so a stream in order never goes back below its highest.
            overtaken[seq] = seq < highestSeqByPublisher[publisher] || (id != Sends.NO_ID && id < highestId);
            delivered.incrementAndGet();
        }
        highestSeqByPublisher[publisher] = Math.max(highestSeqByPublisher[publisher], seq);
        highestId = Math.max(highestId, id);
    }

    /** Events received at least once so far. */
    int delivered() {
        return delivered.get();
    }

    /** What became of the events after each publisher's first {@code warmUp}. */
    Outcome outcome(int warmUp) {
        int[] measured = IntStream.range(0, receipts.length).filter(seq -> !sends.warmUp(seq, warmUp)).toArray();
        int[] got = IntStream.of(measured).filter(seq -> receipts[seq] > 0).toArray();
        long firstSent = IntStream.of(measured).mapToLong(sends::sentNanos).min().orElse(0);
        return new Outcome(measured.length, got.length,
                IntStream.of(measured).map(seq -> Math.max(0, receipts[seq] - 1)).sum(),
                (int) IntStream.of(got).filter(seq -> overtaken[seq]).count(),
                (int) IntStream.of(got).filter(seq -> receivedIds[seq] != sends.publishedId(seq)).count(),
                IntStream.of(got).mapToLong(seq -> receivedNanos[seq] - sends.sentNanos(seq)).toArray(),
                IntStream.of(got).mapToLong(seq -> sends.sentNanos(seq) - firstSent).toArray());
    }

    /** The sequence number a payload starts with (what follows a space is padding). */
    static int sequenceNumber(String payload) {
        int end = payload.indexOf(' ');
        return Integer.parseInt(end < 0 ? payload : payload.substring(0, end));
    }

    private int sequenceOf(String type, String payload) {
        if (!eventType.equals(type)) {
            throw new BenchException("the subscriber got an event of type '" + type + "', not " + eventType);
        }
        try {
            int seq = sequenceNumber(payload);
            if (seq >= 0 && seq < receipts.length) {
                return seq;
            }
        } catch (NumberFormatException e) {
            // reported below with the payload
        }
        throw new BenchException("the subscriber got an event this loop did not publish: payload "
                + payload.substring(0, Math.min(40, payload.length())));
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
     * What became of a loop's measured events, at one subscriber or summed over several.
     *
     * @param events       deliveries expected: events published times subscribers
     * @param delivered    of those, received at least once
     * @param duplicated   receipts beyond the first
     * @param outOfOrder   events that arrived after a later one of the same publisher, or after a higher id
     * @param wrongId      events whose stream id differs from the id publish answered
     * @param latencyNanos send-to-parse time of each delivery
     * @param sentNanos    when each delivered event was sent, from the send of the first measured event, in
     *                     the order of {@code latencyNanos}: to plot latency over the run
     */
    record Outcome(int events, int delivered, int duplicated, int outOfOrder, int wrongId, long[] latencyNanos,
                   long[] sentNanos) {

        /** The outcomes of several subscribers of one loop, as one. */
        static Outcome sum(List<Outcome> outcomes) {
            return new Outcome(outcomes.stream().mapToInt(Outcome::events).sum(),
                    outcomes.stream().mapToInt(Outcome::delivered).sum(),
                    outcomes.stream().mapToInt(Outcome::duplicated).sum(),
                    outcomes.stream().mapToInt(Outcome::outOfOrder).sum(),
                    outcomes.stream().mapToInt(Outcome::wrongId).sum(),
                    outcomes.stream().flatMapToLong(outcome -> LongStream.of(outcome.latencyNanos)).toArray(),
                    outcomes.stream().flatMapToLong(outcome -> LongStream.of(outcome.sentNanos)).toArray());
        }

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

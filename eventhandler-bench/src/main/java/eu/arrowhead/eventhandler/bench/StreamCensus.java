package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Many subscription requests to one event type, for a {@link SubscriberFleet}, each counted by what the
 * server made of it: served, refused (a 503, or the refusal stream that standard SSE clients retry after),
 * closed without an answer, or no answer yet. Nothing a member gets fails the fleet: the counts are the result.
 */
final class StreamCensus implements FleetProtocol {

    /** What became of one request, so far. */
    enum Outcome {
        /** Connected, nothing decisive received yet. */
        WAITING,
        /** A stream opened and is still open. */
        SERVED,
        /** A stream opened, and the server closed it later. */
        SERVED_THEN_CLOSED,
        /** Answered 503. */
        REFUSED_503,
        /** A 200 stream carrying the {@value SseFrame#UNAVAILABLE} notice. */
        REFUSED_IN_STREAM,
        /** Answered another status than 200 or 503. */
        REFUSED_OTHERWISE,
        /** The connection ended before any answer. */
        CLOSED_UNANSWERED,
        /** The answer was not HTTP or not SSE. */
        BROKEN
    }

    private final SseEndpoint endpoint;
    private final AtomicIntegerArray counts = new AtomicIntegerArray(Outcome.values().length);
    private final AtomicInteger servedWithEvent = new AtomicInteger();
    private final AtomicReference<String> firstRefusal = new AtomicReference<>();

    StreamCensus(SseEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    /** Members with this outcome now. */
    int count(Outcome outcome) {
        return counts.get(outcome.ordinal());
    }

    /** Members served whose stream has carried an event. */
    int servedWithEvent() {
        return servedWithEvent.get();
    }

    /** What the first refusal said: its status line or notice; null when there was none. */
    String firstRefusal() {
        return firstRefusal.get();
    }

    @Override
    public InetSocketAddress address() {
        return endpoint.address();
    }

    @Override
    public byte[] request(int member) {
        return endpoint.request();
    }

    @Override
    public Stream stream(int member) {
        counts.incrementAndGet(Outcome.WAITING.ordinal());
        return new Member();
    }

    /** One request's answer; touched only by the fleet's thread, counted where the caller can read it. */
    private final class Member implements Stream {
        private final HttpStreamDecoder decoder = new HttpStreamDecoder(new SseParser(this::frame));
        private Outcome outcome = Outcome.WAITING;
        private boolean gotEvent;

        @Override
        public void feed(byte[] bytes, int offset, int length) {
            if (outcome != Outcome.WAITING && outcome != Outcome.SERVED) {
                return;
            }
            try {
                decoder.feed(bytes, offset, length);
            } catch (BenchException e) {
                int status = decoder.status();
                refused(status == 503 ? Outcome.REFUSED_503 : status != 0 ? Outcome.REFUSED_OTHERWISE : Outcome.BROKEN,
                        e.getMessage());
            }
        }

        private void frame(SseFrame frame) {
            if (frame.isRefusal()) {
                refused(Outcome.REFUSED_IN_STREAM, frame.data());
            } else if (frame.opensStream() && outcome == Outcome.WAITING) {
                move(Outcome.SERVED);
            } else if (frame.isEvent() && outcome == Outcome.SERVED && !gotEvent) {
                gotEvent = true;
                servedWithEvent.incrementAndGet();
            }
        }

        private void refused(Outcome refusal, String what) {
            firstRefusal.compareAndSet(null, what);
            move(refusal);
        }

        @Override
        public boolean live() {
            return outcome != Outcome.WAITING;
        }

        @Override
        public void closed(String how) {
            if (outcome == Outcome.WAITING) {
                move(Outcome.CLOSED_UNANSWERED);
            } else if (outcome == Outcome.SERVED) {
                move(Outcome.SERVED_THEN_CLOSED);
            }
        }

        private void move(Outcome to) {
            counts.decrementAndGet(outcome.ordinal());
            counts.incrementAndGet(to.ordinal());
            outcome = to;
        }
    }
}

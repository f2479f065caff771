package eu.arrowhead.eventhandler.bench;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;

/**
 * How a {@link SubscriberFleet}'s members speak to their broker: where to connect, what to send once
 * connected, and how to read what comes back.
 */
interface FleetProtocol {

    InetSocketAddress address();

    /** What member {@code member} sends once connected: its subscription request. */
    byte[] request(int member);

    /** The decoder of member {@code member}'s incoming bytes. */
    Stream stream(int member);

    /** One member's incoming bytes, decoded as they arrive. */
    interface Stream {
        /**
         * Takes the next bytes.
         *
         * @throws RuntimeException if they break the protocol, or the subscription was refused
         */
        void feed(byte[] bytes, int offset, int length);

        /** Whether the broker has confirmed the subscription: from then on the member is live. */
        boolean live();

        /**
         * The connection has ended ({@code how}: closed by the broker, or the error that broke it). By
         * default a failure of the fleet: a subscriber's stream is meant to last.
         *
         * @throws RuntimeException to fail the fleet
         */
        default void closed(String how) {
            throw new BenchException(how);
        }
    }

    /**
     * A stream of messages that may be split anywhere between reads: the bytes of an incomplete message
     * wait for the next read.
     */
    abstract class MessageStream implements Stream {
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
        /** Set by {@link #message} when the subscription is confirmed. */
        protected boolean live;

        @Override
        public final void feed(byte[] bytes, int offset, int length) {
            long nanos = System.nanoTime();
            pending.write(bytes, offset, length);
            byte[] buffer = pending.toByteArray();
            int at = 0;
            for (int next; (next = message(buffer, at, nanos)) >= 0; ) {
                at = next;
            }
            pending.reset();
            pending.write(buffer, at, buffer.length - at);
        }

        /**
         * Handles the message at {@code at}, which arrived at {@code nanos}.
         *
         * @return where the next message starts, or -1 if this one is not complete yet
         */
        protected abstract int message(byte[] buffer, int at, long nanos);

        @Override
        public final boolean live() {
            return live;
        }
    }
}

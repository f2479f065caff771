package eu.arrowhead.eventhandler.delivery;

import java.io.IOException;

/**
 * What a {@link SubscriberQueue} needs of its client's connection: whether it takes a write now, the write, a word
 * when it takes more, and the ways a stream ends. The server's is {@link GrizzlyStreamPort}; a seam of its own so
 * that the queue's writer can be driven through sockets that stall, trickle or close exactly when a test says.
 *
 * <p>The stream calls it under its monitor, after checking that it has not closed ({@link #isOpen} excepted):
 * Grizzly recycles a response once its connection has closed.
 */
interface StreamPort {

    /** What the port tells its stream. Bound once ({@link #bind}), so that waiting for room allocates nothing. */
    interface Listener {
        /** The socket takes writes again, after {@link #notifyCanWrite}. On an I/O thread, which must not write. */
        void writable();

        /** The connection failed while the stream waited for room. */
        void failed(Throwable cause);

        /** The client closed the connection, while {@link #watchClose} was in effect. */
        void clientClosed();
    }

    /** Called once, before any other call. */
    void bind(Listener listener);

    /** Whether a write would not block: the connection holds less than its bound of bytes not yet sent. */
    boolean canWrite();

    /**
     * Hands a frame to the connection without copying it (frames are shared: it must not change); it is sent by
     * the next {@link #flush} at the latest.
     *
     * @throws IOException if the connection has failed or closed
     */
    void write(byte[] frame) throws IOException;

    void flush() throws IOException;

    /** Asks for one {@link Listener#writable} (or {@link Listener#failed}) once the socket takes more. */
    void notifyCanWrite();

    /** From now on a close by the client is told to {@link Listener#clientClosed}. */
    void watchClose();

    /** Forgets the stream when the connection closes: it ended, and the connection may serve other requests. */
    void unwatchClose();

    boolean isOpen();

    /** The response's headers are out: what only they needed can go ({@link OpenStreamRelease}). */
    void headersWritten();

    /**
     * Answers the request with the refusal instead of a stream (its headers have not been written) and ends
     * the response.
     */
    void refuse(StreamRefusal refusal, String message) throws IOException;

    /** Ends the response cleanly: what was written goes out, then its last chunk. */
    void end();

    /** Cuts the connection at once, without waiting for the client to read what is pending. */
    void terminate();
}

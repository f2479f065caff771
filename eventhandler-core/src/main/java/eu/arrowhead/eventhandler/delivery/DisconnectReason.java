package eu.arrowhead.eventhandler.delivery;

/** Why an SSE stream ended; a label of the {@code eventhandler_subscriber_disconnects_total} metric. */
public enum DisconnectReason {
    /** The client closed the connection. */
    CLIENT_CLOSED,
    /** The subscriber's queue overflowed: it reads slower than events arrive. */
    SLOW,
    /** The subscriber's socket accepted nothing for {@code subscriber.write-timeout-seconds}. */
    WRITE_TIMEOUT,
    /** Writing to the socket failed. */
    WRITE_FAILED,
    /** The server shut down. */
    SHUTDOWN,
    /**
     * Cluster mode: the node was cut off from NATS for {@code cluster.outage-grace-millis}; the client resumes
     * on another node.
     */
    CUT_OFF,
    /** A page of the event log was sent; the client resumes for the next one. */
    REPLAY_PAGE,
    /**
     * The stream was refused for now before it started (shutting down, a topic limit, the event store
     * unreadable or slower than live events): answered with the refusal stream, after which the client
     * comes back.
     */
    REFUSED,
    /**
     * An authorization update left the subscriber authorized for none of the stream's sources: it wrote what
     * else it held and ended; the client's reconnection is refused with the reason.
     */
    UNAUTHORIZED;

    /** The metric label: the name in lower case. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}

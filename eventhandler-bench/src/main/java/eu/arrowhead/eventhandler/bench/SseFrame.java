package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.api.ReplayGap;

/**
 * One Server-Sent Events frame: an event, a comment, or a frame with only an {@code id} (which moves the
 * client's last event id, as the server does at the end of a page of a long replay). A part the frame
 * did not carry is null. Event types starting with {@value #RESERVED_PREFIX} are the server's own frames
 * (the opening, a refusal, a replay gap), never an application's events.
 *
 * @param receivedNanos {@link System#nanoTime()} when the blank line that ends the frame was parsed
 */
record SseFrame(String id, String event, String data, String comment, long receivedNanos) {
    static final String RESERVED_PREFIX = "eventhandler.";
    /** Opens a new stream: {@code id} and {@code data} carry the resume point. */
    static final String OPEN = "eventhandler.open";
    /** The server cannot serve the stream now; the stream ends after it, and the client comes back later. */
    static final String UNAVAILABLE = "eventhandler.unavailable";

    /** An application's event: data, and a type that is not the server's own. */
    boolean isEvent() {
        return data != null && (event == null || !event.startsWith(RESERVED_PREFIX));
    }

    /**
     * Whether the server has answered with a stream: a comment ({@code :ok} at the opening, a heartbeat) or
     * the opening event.
     */
    boolean opensStream() {
        return comment != null || OPEN.equals(event);
    }

    /** The notice that the stream cannot be served now. */
    boolean isRefusal() {
        return UNAVAILABLE.equals(event);
    }

    /** A {@link ReplayGap} notice: some ids the client asked for are not in the log. */
    boolean isGap() {
        return ReplayGap.EVENT_TYPE.equals(event);
    }

    /** Whether it is one of the server's own notices (type {@code eventhandler.*}), not a published event. */
    boolean isNotice() {
        return event != null && event.startsWith("eventhandler.");
    }
}

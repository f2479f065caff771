package eu.arrowhead.eventhandler.bench;

/**
 * One Server-Sent Events frame: an event, or a comment (then {@code comment} is set and the rest null).
 *
 * @param receivedNanos {@link System#nanoTime()} when the blank line that ends the frame was parsed
 */
record SseFrame(String id, String event, String data, String comment, long receivedNanos) {

    boolean isComment() {
        return comment != null;
    }

    /** Whether it is one of the server's own notices (type {@code eventhandler.*}), not a published event. */
    boolean isNotice() {
        return event != null && event.startsWith("eventhandler.");
    }
}

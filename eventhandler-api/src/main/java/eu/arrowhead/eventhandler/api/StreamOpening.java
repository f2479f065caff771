package eu.arrowhead.eventhandler.api;

/**
 * Sent as the {@code data} of the first frame of a new SSE stream (one that resumes nothing), of type
 * {@value #EVENT_TYPE}, with the same value as the frame's {@code id}.
 *
 * <p>It tells the client where the stream starts: a client that loses the connection before its first event
 * resumes from here (with {@code Last-Event-ID}) instead of losing what was published in between. The frame
 * carries data because clients such as the npm {@code eventsource} package take an {@code id} only from a
 * frame with data, and a type because a browser's {@code onmessage} then does not see it. A resumed stream
 * opens without it, so that a client cut off during the replay resumes where the replay got to.
 *
 * @param lastEventId the id of the last event published before the stream opened; events after it follow
 */
public record StreamOpening(long lastEventId) {

    /** The SSE event type of the opening notice; event types starting with {@code eventhandler.} are reserved. */
    public static final String EVENT_TYPE = "eventhandler.open";
}

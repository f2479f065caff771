package eu.arrowhead.eventhandler.api;

/**
 * Sent as the {@code data} of the last frame of a stream that carried one page of the event log (a resume
 * from further back than {@code store.replay-page-events} allows in one go), of type {@value #EVENT_TYPE},
 * with the same value as the frame's {@code id}; the stream then ends and the client resumes after it.
 *
 * <p>The id may be that of an event the subscriber's filters left out, so no event of the page carries it:
 * without this frame a client would resume from its last delivered event and be sent the same page again.
 * Like {@link StreamOpening} it carries data, because the npm {@code eventsource} package takes an {@code id}
 * only from a frame with data, and a type, so that a browser's {@code onmessage} does not see it.
 *
 * @param lastEventId the id of the last event of the log the page covered
 */
public record PageEnd(long lastEventId) {

    /** The SSE event type of the notice; event types starting with {@code eventhandler.} are reserved. */
    public static final String EVENT_TYPE = "eventhandler.page-end";
}

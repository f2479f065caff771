package eu.arrowhead.eventhandler.api;

/**
 * Sent as the {@code data} of an SSE frame of type {@value #EVENT_TYPE} (with no {@code id}) when a
 * subscriber's resume crosses ids the broker no longer holds: one frame per hole, where the hole lies among
 * the replayed events.
 *
 * <p>Events of the subscribed types with ids in ({@code requestedAfterId}, {@code resumedAfterId}] may be
 * missing; the stream goes on with the events after {@code resumedAfterId}. When {@code resumedAfterId} is
 * smaller than {@code requestedAfterId}, the broker's sequence started again (a restart without an event
 * store): forget the ids seen before and accept the ids that follow.
 *
 * @param requestedAfterId the {@code Last-Event-ID} the subscriber sent
 * @param resumedAfterId   the id after which the broker could resume
 */
public record ReplayGap(long requestedAfterId, long resumedAfterId) {

    /** The SSE event type of a replay-gap notice; event types starting with {@code eventhandler.} are reserved. */
    public static final String EVENT_TYPE = "eventhandler.replay-gap";
}

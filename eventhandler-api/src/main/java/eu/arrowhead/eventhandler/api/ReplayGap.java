package eu.arrowhead.eventhandler.api;

import java.util.OptionalLong;

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
 * <p>What an application can do with it: {@link #maxMissingEvents()} bounds the loss (ids are one sequence over
 * every event type, so the events of the subscribed types that are missing are at most that many, often
 * fewer); where it matters, the application reads the range again from its source of truth, or counts it as
 * lost.
 *
 * @param requestedAfterId the {@code Last-Event-ID} the subscriber sent
 * @param resumedAfterId   the id after which the broker could resume
 */
public record ReplayGap(long requestedAfterId, long resumedAfterId) {

    /** The SSE event type of a replay-gap notice; event types starting with {@code eventhandler.} are reserved. */
    public static final String EVENT_TYPE = "eventhandler.replay-gap";

    /**
     * At most how many events of the subscribed types the hole holds: the number of ids in it, since each id was
     * given to at most one event of any type.
     *
     * @return the bound, 0 or more (1 or more in a notice from this server, which names only non-empty ranges);
     *         empty when the broker's sequence started again ({@link #sequenceRestarted()}), where how many events
     *         were lost before the restart cannot be known from the ids
     */
    public OptionalLong maxMissingEvents() {
        return sequenceRestarted() ? OptionalLong.empty() : OptionalLong.of(resumedAfterId - requestedAfterId);
    }

    /**
     * Whether the broker's sequence started again (a restart without an event store): the ids that follow are
     * smaller than those seen before and belong to new events.
     *
     * @return {@code true} when {@code resumedAfterId < requestedAfterId}
     */
    public boolean sequenceRestarted() {
        return resumedAfterId < requestedAfterId;
    }
}

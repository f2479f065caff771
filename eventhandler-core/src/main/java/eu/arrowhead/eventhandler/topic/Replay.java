package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.List;

/**
 * What a resuming subscriber is sent before live events: first, if {@link #needsJournal()}, the journal's
 * events in ({@code journalAfterId}, {@code journalUpToId}], then {@code events}.
 *
 * @param events         retained events after the resume point (or after {@code journalUpToId}), in id order
 * @param gap            set when events after the resume point may have been forgotten, else {@code null}
 * @param liveAfterId    the id of the last event delivered before the subscriber was registered: every
 *                       later event reaches it live
 * @param journalAfterId the resume point, when the journal must serve what the windows no longer hold
 * @param journalUpToId  the last id the journal must serve; 0 when the windows hold everything
 */
public record Replay(List<PublishedEvent> events, ReplayGap gap, long liveAfterId, long journalAfterId,
                     long journalUpToId) {

    static Replay live(long liveAfterId) {
        return new Replay(List.of(), null, liveAfterId, 0, 0);
    }

    /** Whether older events must first be read from the journal. */
    public boolean needsJournal() {
        return journalUpToId > journalAfterId;
    }
}

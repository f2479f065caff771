package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.List;

/**
 * What a resuming subscriber is sent before live events.
 *
 * @param events     retained events after the resume point, in id order
 * @param gap        set when events after the resume point may have been forgotten, else {@code null}
 * @param liveAfterId the id of the last event published before the subscriber was registered: every later
 *                   event reaches it live
 */
public record Replay(List<PublishedEvent> events, ReplayGap gap, long liveAfterId) {
}

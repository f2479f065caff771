package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.ReplayGap;
import java.util.List;

/**
 * What a resuming subscriber is sent before live events.
 *
 * @param events retained events after the resume point, in id order
 * @param gap    set when events after the resume point may have been forgotten, else {@code null}
 */
public record Replay(List<PublishedEvent> events, ReplayGap gap) {

    public static final Replay NONE = new Replay(List.of(), null);
}

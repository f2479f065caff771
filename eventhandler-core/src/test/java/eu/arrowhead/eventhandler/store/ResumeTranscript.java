package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A resume from id 0 written down as lines ({@code event 7}, {@code gap 7-10}), so that what a stream
 * carried and what the log says it must carry compare as two lists.
 */
final class ResumeTranscript {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ResumeTranscript() {
    }

    /** Every logged event, and a notice for each run of ids up to {@code lastId} the log does not hold. */
    static List<String> expected(List<Long> loggedIds, long lastId) {
        List<String> lines = new ArrayList<>();
        long expectedNext = 1;
        for (long id : loggedIds) {
            if (id > expectedNext) {
                lines.add("gap " + (expectedNext - 1) + "-" + (id - 1));
            }
            lines.add("event " + id);
            expectedNext = id + 1;
        }
        if (expectedNext <= lastId) {
            lines.add("gap " + (expectedNext - 1) + "-" + lastId);
        }
        return lines;
    }

    /** A frame the stream carried, as a line; a notice must carry no id. */
    static String line(Frame frame) {
        if (!ReplayGap.EVENT_TYPE.equals(frame.event())) {
            return "event " + frame.id();
        }
        assertNull(frame.id(), "a notice carries no id");
        try {
            ReplayGap gap = JSON.readValue(frame.data(), ReplayGap.class);
            return "gap " + gap.requestedAfterId() + "-" + gap.resumedAfterId();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

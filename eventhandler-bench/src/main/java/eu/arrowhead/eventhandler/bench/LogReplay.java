package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.LongStream;

/**
 * A subscriber that resumes after id 0 and follows the server through its whole log as a client does
 * after a long absence: connection after connection (the server ends a stream after a page of the log,
 * with an id-only frame to resume after, and may refuse a resume for a while), resuming each time after
 * the last id it got, until the event with a given id arrives. On the way it records every event's id and
 * every replay-gap notice.
 */
final class LogReplay {
    private static final Duration POLL = Duration.ofMillis(10);
    /** Before resuming again after a refusal or a stream that brought nothing. */
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private LogReplay() {
    }

    /**
     * @param ids         the events' ids, in the order they came
     * @param gaps        the replay-gap notices, in the order they came
     * @param reached     whether the event awaited came
     * @param connections how many streams it took
     * @param problem     the last refusal or failure on the way; null when there was none
     */
    record Result(long[] ids, List<ReplayGap> gaps, boolean reached, int connections, String problem) {
    }

    /** Reads {@code eventType} from the start until the event with id {@code untilId} has come, or the timeout. */
    static Result read(URI base, String eventType, long untilId, Duration timeout) {
        Deadline deadline = Deadline.in(timeout, "the replay from id 0 to reach id " + untilId);
        Frames frames = new Frames(untilId);
        SseEndpoint endpoint = new SseEndpoint(base, eventType);
        int connections = 0;
        String problem = null;
        while (!frames.reached && !deadline.passed()) {
            long afterId = frames.last;
            connections++;
            try (SseReader reader = SseReader.openForEveryFrame(endpoint.resumingAfter(afterId), frames, deadline)) {
                deadline.await(() -> frames.reached || reader.ended(), () -> { }, POLL);
            } catch (BenchException e) {
                problem = e.getMessage();
            }
            if (frames.refusal != null) {
                problem = "refused: " + frames.refusal;
                frames.refusal = null;
            }
            if (!frames.reached && frames.last == afterId) {
                LockSupport.parkNanos(RETRY_PAUSE.toNanos());
            }
        }
        return new Result(frames.ids.build().toArray(), frames.gaps, frames.reached, connections, problem);
    }

    /** What the streams bring, on their reader threads one after another; read once each has stopped. */
    private static final class Frames implements Consumer<SseFrame> {
        private final long untilId;
        private final LongStream.Builder ids = LongStream.builder();
        private final List<ReplayGap> gaps = new ArrayList<>();
        private volatile long last;
        private volatile boolean reached;
        private volatile String refusal;

        Frames(long untilId) {
            this.untilId = untilId;
        }

        @Override
        public void accept(SseFrame frame) {
            if (frame.isEvent()) {
                long id = Long.parseLong(frame.id());
                ids.add(id);
                last = id;
                reached = id >= untilId;
            } else if (frame.isGap()) {
                gaps.add(gap(frame.data()));
            } else if (frame.isRefusal()) {
                refusal = frame.data();
            } else if (frame.data() == null && frame.comment() == null && frame.id() != null) {
                // The end of a page: the id to resume after, which may lie past events of other types.
                last = Long.parseLong(frame.id());
            }
        }

        private static ReplayGap gap(String data) {
            try {
                return JsonMapper.get().readValue(data, ReplayGap.class);
            } catch (JsonProcessingException e) {
                throw new BenchException("a replay-gap notice whose data is not {requestedAfterId,"
                        + " resumedAfterId}: " + data);
            }
        }
    }
}

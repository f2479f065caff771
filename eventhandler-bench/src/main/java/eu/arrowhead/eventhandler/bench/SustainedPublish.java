package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

/**
 * The publish rate the server sustains: several publishers, each on a kept-alive connection of its own,
 * publish small events back to back for a set time. One publisher would measure its own round trips, not
 * what the server takes; several keep requests waiting, so that a sync store's commits can be shared.
 * Every answer is counted: a refusal (503 from a full store buffer or a commit that took too long) is a
 * result here, not a failure. The ids of the accepted events are kept, for a check of the event log.
 */
final class SustainedPublish {
    static final String EVENT_TYPE = "bench.sustained";
    /** Beyond the phase itself: a publish in flight at its end is answered within HttpPublisher's timeout. */
    private static final Duration FINISH_TIMEOUT = Duration.ofSeconds(30);

    private SustainedPublish() {
    }

    /**
     * @param accepted   events accepted (answered 200)
     * @param refused    requests answered anything else
     * @param refusal    the first refusal, as status and body; null when there was none
     * @param ids        the ids of the accepted events, in no order
     * @param nanos      from the start until the last answer
     * @param endedNanos {@link System#nanoTime} of the last answer
     */
    record Result(long accepted, long refused, String refusal, long[] ids, long nanos, long endedNanos) {

        /** Accepted publishes per second. */
        BigDecimal rate() {
            return ResultTable.perSecond(accepted, nanos);
        }
    }

    /** What one publisher got. */
    private record Tally(long refused, String refusal, long[] ids) {
    }

    static Result run(URI base, int publishers, Duration length) {
        return run(base, publishers, length, 1);
    }

    /** Like {@link #run(URI, int, Duration)}, each request a batch of {@code batch} events when above 1. */
    static Result run(URI base, int publishers, Duration length, int batch) {
        byte[] body = batch == 1 ? HttpPublisher.body(EVENT_TYPE, "sustained")
                : HttpPublisher.batchBody(EVENT_TYPE, "sustained", batch);
        ExecutorService threads = Executors.newFixedThreadPool(publishers);
        long start = System.nanoTime();
        long end = start + length.toNanos();
        Callable<Tally> publisher = () -> publishUntil(base, body, batch > 1, end);
        try {
            List<Future<Tally>> futures = threads.invokeAll(Collections.nCopies(publishers, publisher),
                    length.plus(FINISH_TIMEOUT).toNanos(), TimeUnit.NANOSECONDS);
            long ended = System.nanoTime();
            List<Tally> tallies = new ArrayList<>();
            for (Future<Tally> future : futures) {
                tallies.add(future.get());
            }
            long[] ids = tallies.stream().flatMapToLong(tally -> LongStream.of(tally.ids())).toArray();
            return new Result(ids.length, tallies.stream().mapToLong(Tally::refused).sum(),
                    tallies.stream().map(Tally::refusal).filter(Objects::nonNull).findFirst().orElse(null),
                    ids, ended - start, ended);
        } catch (CancellationException e) {
            throw new BenchException("a publisher was still publishing " + FINISH_TIMEOUT.toSeconds()
                    + " s after the end of the sustained phase", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof BenchException failure ? failure
                    : new BenchException("a publisher failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while publishing", e);
        } finally {
            threads.shutdownNow();
        }
    }

    private static Tally publishUntil(URI base, byte[] body, boolean batch, long endNanos) {
        LongStream.Builder ids = LongStream.builder();
        long refused = 0;
        String refusal = null;
        try (HttpPublisher publisher = new HttpPublisher(base, false)) {
            while (System.nanoTime() - endNanos < 0) {
                HttpPublisher.Answer answer = batch ? publisher.sendBatch(body) : publisher.send(body);
                if (answer.accepted()) {
                    LongStream.of(answer.ids()).forEach(ids);
                } else {
                    refused++;
                    refusal = refusal == null ? answer.code() + " " + answer.refusal() : refusal;
                }
            }
        }
        return new Tally(refused, refusal, ids.build().toArray());
    }
}

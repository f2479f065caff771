package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.LongStream;

/**
 * The publish rate the server sustains: several publishers, each on a kept-alive connection of its own,
 * publish small events back to back for a set time. One publisher would measure its own round trips, not
 * what the server takes; several keep requests waiting, so that a sync store's commits can be shared.
 * Every answer is counted: a refusal (503 from a full store buffer or a commit that took too long) is a
 * result here, not a failure. The ids of the accepted events are kept, for a check of the event log.
 *
 * <p>The same publishers also run at a fixed rate until stopped ({@link #start}), and may count a request
 * that gets no answer instead of failing: the reliability suite publishes so into a server it kills.
 */
final class SustainedPublish {
    static final String EVENT_TYPE = "bench.sustained";
    /** Beyond the phase itself: a publish in flight at its end is answered within HttpPublisher's timeout. */
    private static final Duration FINISH_TIMEOUT = Duration.ofSeconds(30);
    /** After a request that got no answer: a server that is gone refuses the next connection at once. */
    private static final Duration AFTER_NO_ANSWER = Duration.ofMillis(100);
    private static final Duration FAILURE_POLL = Duration.ofMillis(100);

    private SustainedPublish() {
    }

    /**
     * What the publishers send, and how.
     *
     * @param eventType         the events' type
     * @param publishers        how many publish at once, each on a connection and a thread of its own
     * @param batch             events per request; above 1 the requests go to {@code publish/batch}
     * @param requestsPerSecond all publishers' requests per second together, each publisher on a fixed
     *                          schedule of its share; 0: each sends its next request as soon as the last is answered
     * @param tolerant          whether a request that gets no answer (the server is gone, or hung past
     *                          HttpPublisher's timeout) is counted and the publisher goes on; otherwise it
     *                          fails the run
     */
    record Load(String eventType, int publishers, int batch, int requestsPerSecond, boolean tolerant) {

        /** Events of {@link #EVENT_TYPE} back to back; no answer is a failure. */
        static Load backToBack(int publishers, int batch) {
            return new Load(EVENT_TYPE, publishers, batch, 0, false);
        }
    }

    /**
     * @param accepted   events accepted (answered 200)
     * @param refused    requests answered anything else
     * @param refusal    the first refusal, as status and body; null when there was none
     * @param ids        the ids of the accepted events, in no order
     * @param nanos      from the start until the last answer
     * @param endedNanos {@link System#nanoTime} of the last answer
     * @param answers    requests by the status they were answered with, 200 among them
     * @param unanswered requests that got no answer (only a tolerant load goes on after one)
     * @param noAnswer   why the first of them got none; null when all were answered
     */
    record Result(long accepted, long refused, String refusal, long[] ids, long nanos, long endedNanos,
                  Map<Integer, Long> answers, long unanswered, String noAnswer) {

        /** Accepted publishes per second. */
        BigDecimal rate() {
            return ResultTable.perSecond(accepted, nanos);
        }

        /** Requests answered {@code status}. */
        long answered(int status) {
            return answers.getOrDefault(status, 0L);
        }
    }

    static Result run(URI base, int publishers, Duration length) {
        return run(base, publishers, length, 1);
    }

    /** Like {@link #run(URI, int, Duration)}, each request a batch of {@code batch} events when above 1. */
    static Result run(URI base, int publishers, Duration length, int batch) {
        return run(base, Load.backToBack(publishers, batch), length);
    }

    /** Publishes {@code load} for {@code length}, then returns what the publishers got. */
    static Result run(URI base, Load load, Duration length) {
        Running running = start(base, load);
        // A publisher of a strict load that failed ends the phase at once: the run has failed.
        Deadline.in(length, "the sustained phase").await(running::failed, () -> { }, FAILURE_POLL);
        return running.stop();
    }

    /** Starts the publishers; they publish until {@link Running#stop}. */
    static Running start(URI base, Load load) {
        return new Running(base, load);
    }

    /** Publishers at work. */
    static final class Running {
        private final long start = System.nanoTime();
        private final List<Thread> threads = new ArrayList<>();
        private final List<Tally> tallies = new ArrayList<>();
        private final AtomicLong accepted = new AtomicLong();
        private final AtomicReference<BenchException> failure = new AtomicReference<>();
        private volatile boolean stopping;

        private Running(URI base, Load load) {
            byte[] body = load.batch() == 1 ? HttpPublisher.body(load.eventType(), "sustained")
                    : HttpPublisher.batchBody(load.eventType(), "sustained", load.batch());
            // Each publisher's share of the rate, so that together they keep it.
            int share = load.requestsPerSecond() == 0 ? 0
                    : Math.max(1, Math.round((float) load.requestsPerSecond() / load.publishers()));
            for (int p = 0; p < load.publishers(); p++) {
                Tally tally = new Tally();
                tallies.add(tally);
                PublishLoop.Schedule schedule = new PublishLoop.Schedule(start, 0, share);
                Thread thread = new Thread(() -> publish(base, body, load, schedule, tally),
                        "bench-sustained-publisher-" + p);
                thread.setDaemon(true);
                threads.add(thread);
            }
            threads.forEach(Thread::start);
        }

        /** Events accepted so far. */
        long accepted() {
            return accepted.get();
        }

        /** Whether a publisher of a strict load has failed. */
        boolean failed() {
            return failure.get() != null;
        }

        private void publish(URI base, byte[] body, Load load, PublishLoop.Schedule schedule, Tally tally) {
            try (HttpPublisher publisher = new HttpPublisher(base, false)) {
                for (int index = 0; !stopping; index++) {
                    schedule.awaitDue(index);
                    if (stopping) {
                        return;
                    }
                    HttpPublisher.Answer answer;
                    try {
                        answer = load.batch() > 1 ? publisher.sendBatch(body) : publisher.send(body);
                    } catch (BenchException e) {
                        if (!load.tolerant()) {
                            throw e;
                        }
                        tally.unanswered(e.getMessage());
                        LockSupport.parkNanos(AFTER_NO_ANSWER.toNanos());
                        continue;
                    }
                    tally.answered(answer);
                    accepted.addAndGet(answer.ids().length);
                }
            } catch (BenchException e) {
                failure.compareAndSet(null, e);
            }
        }

        /** Stops the publishers after the requests they have in flight, and returns what they got. */
        Result stop() {
            stopping = true;
            Deadline finish = Deadline.in(FINISH_TIMEOUT, "the publishers to finish");
            for (Thread thread : threads) {
                try {
                    thread.join(finish.remainingMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new BenchException("interrupted while publishing", e);
                }
                if (thread.isAlive()) {
                    throw new BenchException("a publisher was still publishing " + FINISH_TIMEOUT.toSeconds()
                            + " s after it was told to stop");
                }
            }
            long ended = System.nanoTime();
            if (failure.get() != null) {
                throw failure.get();
            }
            Map<Integer, Long> answers = new TreeMap<>();
            tallies.forEach(tally -> tally.answers.forEach((status, count) -> answers.merge(status, count, Long::sum)));
            long[] ids = tallies.stream().flatMapToLong(tally -> tally.ids.build()).toArray();
            return new Result(ids.length, tallies.stream().mapToLong(tally -> tally.refused).sum(),
                    tallies.stream().map(tally -> tally.refusal).filter(Objects::nonNull).findFirst().orElse(null),
                    ids, ended - start, ended, answers, tallies.stream().mapToLong(tally -> tally.unanswered).sum(),
                    tallies.stream().map(tally -> tally.noAnswer).filter(Objects::nonNull).findFirst().orElse(null));
        }
    }

    /** What one publisher got; written by its thread only, read after it has ended. */
    private static final class Tally {
        private final LongStream.Builder ids = LongStream.builder();
        private final Map<Integer, Long> answers = new TreeMap<>();
        private long refused;
        private String refusal;
        private long unanswered;
        private String noAnswer;

        void answered(HttpPublisher.Answer answer) {
            answers.merge(answer.code(), 1L, Long::sum);
            if (answer.accepted()) {
                LongStream.of(answer.ids()).forEach(ids);
            } else {
                refused++;
                refusal = refusal == null ? answer.code() + " " + answer.refusal() : refusal;
            }
        }

        void unanswered(String why) {
            unanswered++;
            noAnswer = noAnswer == null ? why : noAnswer;
        }
    }
}

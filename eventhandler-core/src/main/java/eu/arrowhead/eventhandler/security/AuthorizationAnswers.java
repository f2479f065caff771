package eu.arrowhead.eventhandler.security;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the Authorization system last said about each subscriber: the publishers it may receive events from,
 * kept in memory and in the event store ({@link AuthorizationStore}), so that it holds across a restart.
 *
 * <p>As the 4.x Event Handler: while the Authorization system cannot be reached, a subscriber it has answered
 * for keeps the publishers it last named, and a subscriber it has not is refused with 503 until it answers
 * (fail closed for what is new, served for what is known). Reachability is probed with {@code GET {uri}/echo}:
 * at start {@code 1 + security.authorization.start-retries} times, then in the background every
 * {@code security.authorization.retry-seconds} until it answers.
 *
 * <p>The answers change in three ways, each followed by the one notice push and streams both listen to
 * ({@link #onChange}): an authorization update forgets them all ({@link #rulesChanged}); every
 * {@code security.authorization.recheck-seconds} each is asked again and replaced where it differs (an update
 * sent while this Event Handler was down, or to its old address, is otherwise never seen); and once the
 * Authorization system answers after an outage, each is asked again. A recheck that fails keeps the old answer:
 * an unreachable Authorization system has not changed its rules.
 */
public final class AuthorizationAnswers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AuthorizationAnswers.class);

    private final AuthorizationSystem system;
    private final KeptAnswers kept;
    private final Duration retryInterval;
    /** Probes, rechecks and the notices after them, in order, on one thread. */
    private final ScheduledThreadPoolExecutor background = new ScheduledThreadPoolExecutor(1,
            NamedThreads.daemons("eh-authorization"));
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    /**
     * How many times the answers were forgotten; guarded by {@link #answers}'s monitor with the forgetting
     * itself. An answer to a check sent before a forget may be of the old rules, and is not kept.
     */
    private long forgets;
    private volatile boolean reachable;
    private final AtomicBoolean probing = new AtomicBoolean();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    /** One notice at a time, so that an older recomputation never lands after a newer one. */
    private final Object notice = new Object();

    /** What the Authorization system said about a subscriber, as asked: the form that is kept in the store. */
    record Answer(SystemRequest subscriber, Set<String> publishers) {
    }

    private AuthorizationAnswers(AuthorizationSystem system, AuthorizationStore store, Duration retryInterval) {
        this.system = system;
        this.kept = new KeptAnswers(store);
        this.retryInterval = retryInterval;
        background.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Loads the kept answers and connects: tries {@code 1 + startRetries} times, {@code retryInterval} apart;
     * if it never answers, returns anyway and goes on trying in the background.
     *
     * @param recheckInterval how often every kept answer is asked again; zero for never
     */
    static AuthorizationAnswers connect(AuthorizationSystem system, AuthorizationStore store, int startRetries,
                                        Duration retryInterval, Duration recheckInterval) {
        AuthorizationAnswers answers = new AuthorizationAnswers(system, store, retryInterval);
        answers.load();
        for (int attempt = 0; attempt <= startRetries && !answers.reachable; attempt++) {
            if (attempt > 0 && !pause(retryInterval)) {
                break;
            }
            answers.reachable = system.answersEcho();
        }
        if (answers.reachable) {
            LOG.info("the Authorization system at {} answers", system.uri());
            if (!answers.answers.isEmpty()) {
                // Its rules may have changed while this Event Handler was down.
                answers.background.execute(answers::recheckAll);
            }
        } else {
            LOG.warn("the Authorization system at {} cannot be reached; the {} subscribers it has answered for keep the"
                    + " publishers it last named, new subscribers are refused until it answers; trying again every"
                    + " {} s", system.uri(), answers.answers.size(), retryInterval.toSeconds());
            answers.probeInBackground();
        }
        if (!recheckInterval.isZero()) {
            answers.background.scheduleWithFixedDelay(answers::recheckAll, recheckInterval.toMillis(),
                    recheckInterval.toMillis(), TimeUnit.MILLISECONDS);
        }
        return answers;
    }

    /**
     * The names (lower case) of the publishers {@code subscriber} may receive events from; empty when the
     * Authorization system authorizes none, or answers with an error (asked again next time).
     *
     * @throws UnavailableException when it has not answered for this subscriber and cannot be reached (503)
     */
    Set<String> publishersOf(SystemRequest subscriber) {
        Answer known = answers.get(key(subscriber));
        if (known != null) {
            return known.publishers();
        }
        if (!reachable) {
            throw unavailable(subscriber);
        }
        long forgotten = forgotten();
        try {
            Set<String> authorized = system.check(subscriber);
            if (authorized == null) {
                // A refusal may be passing (a 500): denied now, asked again next time rather than remembered.
                return Set.of();
            }
            keep(new Answer(subscriber, authorized), forgotten);
            return authorized;
        } catch (IOException e) {
            lost(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw unavailable(subscriber);
    }

    /**
     * The Authorization system's rules changed ({@code authupdate}): every answer is forgotten, here and in the
     * store; the subscribers it had answered for are asked again all together, and the listeners put what it
     * says now in effect before this returns. A subscriber it does not answer for now is left to the listeners,
     * whose question is refused while it cannot be reached: that subscriber gets no publisher (fail closed).
     */
    void rulesChanged() {
        List<SystemRequest> known;
        long forgotten;
        synchronized (answers) {
            forgotten = ++forgets;
            known = answers.values().stream().map(Answer::subscriber).toList();
            answers.clear();
            kept.forgetAll();
        }
        // Asked even if it seemed unreachable: it has just called.
        askAgain(known).forEach((subscriber, publishers) -> keep(new Answer(subscriber, publishers), forgotten));
        notifyChange();
    }

    /**
     * Calls {@code listener} after every change of the answers: it asks {@link #publishersOf} again for the
     * subscribers it serves and puts the answers in effect.
     */
    void onChange(Runnable listener) {
        listeners.add(listener);
    }

    private void notifyChange() {
        synchronized (notice) {
            for (Runnable listener : listeners) {
                try {
                    listener.run();
                } catch (RuntimeException e) {
                    LOG.error("putting the Authorization system's answers in effect failed", e);
                }
            }
        }
    }

    /** The periodic recheck, and the first one after a start: only while it is reachable (else the probe does). */
    private void recheckAll() {
        if (reachable) {
            int changed = recheck();
            if (changed > 0) {
                LOG.info("the Authorization system names other publishers than before for {} subscribers (an"
                        + " authorization update may have been missed); putting them in effect", changed);
                notifyChange();
            }
        }
    }

    /**
     * Asks again about every subscriber it has answered for and keeps what differs. If it cannot be reached,
     * every answer stays as it was.
     *
     * @return how many answers changed
     */
    private int recheck() {
        long forgotten = forgotten();
        List<Answer> kept = List.copyOf(answers.values());
        Map<SystemRequest, Set<String>> now = askAgain(kept.stream().map(Answer::subscriber).toList());
        int changed = 0;
        for (Answer answer : kept) {
            Set<String> publishers = now.get(answer.subscriber());
            if (publishers != null && !publishers.equals(answer.publishers())
                    && keep(new Answer(answer.subscriber(), publishers), forgotten)) {
                changed++;
            }
        }
        return changed;
    }

    /**
     * Asks about the subscribers all together: the answers it gave. A subscriber it could not be asked about is
     * missing: the listeners then ask for it one by one, and are refused while it cannot be reached.
     */
    private Map<SystemRequest, Set<String>> askAgain(List<SystemRequest> subscribers) {
        try {
            AuthorizationSystem.Answers asked = system.checkAll(subscribers);
            if (asked.unreachable() != null) {
                lost(asked.unreachable());
            } else {
                reachable = true;
            }
            return asked.answers();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of();
        }
    }

    /** Keeps an answer, here and in the store, unless the answers were forgotten since its check was sent. */
    private boolean keep(Answer answer, long forgottenBefore) {
        String key = key(answer.subscriber());
        synchronized (answers) {
            if (forgets != forgottenBefore) {
                return false;
            }
            answers.put(key, answer);
            // Under the monitor, so that the store's writes are queued in the order of the changes.
            kept.save(new AuthorizationStore.StoredAnswer(key, System.currentTimeMillis(), json(answer)));
            return true;
        }
    }

    private long forgotten() {
        synchronized (answers) {
            return forgets;
        }
    }

    private void load() {
        try {
            for (AuthorizationStore.StoredAnswer stored : kept.load()) {
                answers.put(stored.subscriberKey(), JsonMapper.get().readValue(stored.json(), Answer.class));
            }
        } catch (JsonProcessingException | RuntimeException e) {
            LOG.warn("the kept answers of the Authorization system cannot be read ({}); every subscriber is asked"
                    + " again", e.toString());
            answers.clear();
        }
    }

    private static String json(Answer answer) {
        try {
            return JsonMapper.get().writeValueAsString(answer);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an answer is always writable", e);
        }
    }

    private void lost(IOException e) {
        if (reachable) {
            LOG.warn("the Authorization system at {} cannot be reached ({}); subscribers it has answered for keep the"
                    + " publishers it last named, new subscribers are refused until it answers", system.uri(),
                    e.toString());
        }
        reachable = false;
        probeInBackground();
    }

    private void probeInBackground() {
        if (probing.compareAndSet(false, true)) {
            probeLater();
        }
    }

    private void probe() {
        if (!system.answersEcho()) {
            probeLater();
            return;
        }
        // In this order: a check failing in between finds no probe under way and starts one.
        probing.set(false);
        reachable = true;
        LOG.info("the Authorization system at {} answers again", system.uri());
        recheck();
        // Subscribers refused or left with no publisher while it was down are decided again.
        notifyChange();
    }

    private void probeLater() {
        try {
            background.schedule(this::probe, retryInterval.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the server is stopping
        }
    }

    private UnavailableException unavailable(SystemRequest subscriber) {
        return new UnavailableException("the Authorization system (" + system.uri() + ") cannot be reached, and"
                + " it has not yet said which publishers system '" + subscriber.systemName() + "' may receive"
                + " events from; try again later");
    }

    private static String key(SystemRequest subscriber) {
        return subscriber.systemName().toLowerCase(Locale.ROOT);
    }

    private static boolean pause(Duration interval) {
        try {
            Thread.sleep(interval.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Cuts off a check under way (only HTTP runs there), then lets the store's queued writes end. */
    @Override
    public void close() {
        background.shutdownNow();
        kept.close();
    }
}

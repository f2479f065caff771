package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which publishers an SSE stream carries: when it opens, and again for every open stream when the
 * authorizer's answers change ({@code POST publish/authupdate}, {@link Authorizer#onAuthorizationChange}). A
 * stream stops receiving from a publisher whose rule was deleted before the update is answered, and receives
 * from a newly authorized one from then on, without reconnecting; a stream left with no publisher ends
 * ({@link SubscriberQueue#authorize}).
 *
 * <p>An update runs in three steps, so that no lock is held while the Authorization system is asked, which
 * can take seconds:
 * <ol>
 * <li><b>forget</b> (done by the authorizer before its notice, {@link Authorizer#authorizationChanged}): the
 *     kept answers go; then the update takes the next generation;</li>
 * <li><b>gather</b>: the authorizer is asked once per subscribing system (not per stream), outside every
 *     lock, the hub's included;</li>
 * <li><b>apply</b>: each stream's new filter is put in effect, a field write under the stream's own monitor:
 *     no socket write, no hub lock, so that publishes go on meanwhile.</li>
 * </ol>
 *
 * <p>A stream that opens while an update runs may have been decided with the old rules and yet be missing
 * from the update's list of open streams. Each stream therefore carries the generation its filter was
 * decided in: the generation is read before the authorizer is asked at the open, and once the stream is
 * known to the supervisor (where every later update finds it) it decides again if the generation moved
 * ({@link #catchUp}). An apply of an older generation never replaces a newer one.
 */
public final class StreamAuthorization {
    private static final Logger LOG = LoggerFactory.getLogger(StreamAuthorization.class);

    private final Authorizer authorizer;
    private final StreamSupervisor supervisor;
    private final AtomicLong generation = new AtomicLong();

    /** Listens to {@code authorizer}'s changes from now on. */
    public StreamAuthorization(Authorizer authorizer, StreamSupervisor supervisor) {
        this.authorizer = authorizer;
        this.supervisor = supervisor;
        authorizer.onAuthorizationChange(this::authorizationChanged);
    }

    /** The generation of the rules; read before a stream's filter is decided. */
    long generation() {
        return generation.get();
    }

    /**
     * The filter a new stream opens with.
     *
     * @throws RequestException 403 when the subscriber is authorized for none of the sources it asked for
     * @throws UnavailableException when the authorizer cannot say now (the Authorization system is down)
     */
    SubscriberFilter filterAtOpen(StreamRequest request) {
        SubscriberFilter filter = request.filter(authorizer.authorizedPublishers(request.subscriber()));
        if (filter == null) {
            throw RequestException.forbidden(request.unauthorized());
        }
        return filter;
    }

    /**
     * Called once a new stream is known to the supervisor, before it receives anything: if an update came
     * since {@code decidedIn}, its filter may be of the old rules, and it is decided again now.
     */
    void catchUp(SubscriberQueue stream, long decidedIn) {
        long current = generation.get();
        if (current != decidedIn) {
            reauthorize(List.of(stream), current);
        }
    }

    /**
     * The authorizer's answers changed (an authorization update, a recheck, the Authorization system back after
     * an outage): every open stream gets the publishers the rules now allow. Returns once they are in effect.
     */
    private void authorizationChanged() {
        long current = generation.incrementAndGet();
        List<SubscriberQueue> streams = supervisor.streams();
        reauthorize(streams, current);
        LOG.debug("authorization update {}: the publishers of {} open streams decided again", current,
                streams.size());
    }

    private void reauthorize(List<SubscriberQueue> streams, long current) {
        Map<String, Optional<Set<String>>> answers = gather(streams);
        apply(streams, answers, current);
    }

    /** Step 2: one question per subscribing system, outside every lock. */
    private Map<String, Optional<Set<String>>> gather(List<SubscriberQueue> streams) {
        Map<String, Optional<Set<String>>> answers = new HashMap<>();
        for (SubscriberQueue stream : streams) {
            String subscriber = stream.request().subscriber();
            if (subscriber != null && !answers.containsKey(subscriber)) {
                answers.put(subscriber, ask(subscriber));
            }
        }
        return answers;
    }

    private Optional<Set<String>> ask(String subscriber) {
        try {
            return authorizer.authorizedPublishers(subscriber);
        } catch (UnavailableException e) {
            // The Authorization system is down and forgot this subscriber: none until it answers (it says so).
            return Optional.of(Set.of());
        } catch (RuntimeException e) {
            // Fail closed, as when the Authorization system cannot be reached.
            LOG.error("deciding the publishers of subscriber {} failed; its streams are authorized for none",
                    subscriber, e);
            return Optional.of(Set.of());
        }
    }

    /** Step 3: each stream's filter from the answers; a stream that names no subscriber is not restricted. */
    private static void apply(List<SubscriberQueue> streams, Map<String, Optional<Set<String>>> answers,
                              long current) {
        for (SubscriberQueue stream : streams) {
            StreamRequest request = stream.request();
            if (request.subscriber() != null) {
                stream.authorize(request.filter(answers.get(request.subscriber())), current);
            }
        }
    }
}

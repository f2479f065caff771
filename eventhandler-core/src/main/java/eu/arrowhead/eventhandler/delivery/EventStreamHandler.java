package eu.arrowhead.eventhandler.delivery;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.http.ErrorResponses;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.http.RequestException;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.Caller;
import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.HubUnavailableException;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Replay;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.glassfish.grizzly.http.Method;
import org.glassfish.grizzly.http.server.HttpHandler;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.RequestExecutorProvider;
import org.glassfish.grizzly.http.server.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /eventhandler/events}: opens an SSE stream of one or more event types, optionally filtered by
 * source and metadata, optionally resuming after an id.
 *
 * <p>A plain Grizzly handler rather than a JAX-RS resource, because the stream is written by our own
 * non-blocking writers ({@link SubscriberQueue}), not by a thread per subscriber. It runs on the selector
 * thread that parsed the request (it only validates and registers): that keeps Grizzly reading the
 * connection, so a client that goes away is noticed at once.
 *
 * <p>A resume from further back than the replay windows reach is served from the event store: the
 * subscriber is registered first (live events queue up), then a journal reader thread reads the older
 * events and starts the stream with them. At most {@code store.replay-page-events} come from the store per
 * connection; a longer catch-up ends the stream after a page and the client resumes from there.
 *
 * <p>In secure mode the caller subscribes as itself: {@link Authorizer#requireSubscribe} for each event
 * type, and when the Authorization system names the publishers it may receive from, its stream carries
 * only theirs (the intersection with its own {@code source} filter, if any; 403 if that is empty). The
 * publishers are fixed when the stream opens: after an authorization update the client's next
 * reconnection picks up the change.
 */
public final class EventStreamHandler extends HttpHandler {
    public static final String PATH = "/eventhandler/events";
    private static final Logger LOG = LoggerFactory.getLogger(EventStreamHandler.class);
    private static final PublishedEvent OPENING_RESUMED = PublishedEvent.control(":ok\n\n");
    private static final String META_PREFIX = "meta.";

    private final Hub hub;
    private final Authorizer authorizer;
    private final StreamSupervisor supervisor;
    private final Executor writers;
    private final int queueCapacity;
    private final int sendBufferBytes;
    private final EventJournal journal;
    private final Executor journalReaders;
    private final int journalPageEvents;
    private final RequestExecutorProvider sameThread = new RequestExecutorProvider.SameThreadProvider();

    /**
     * @param journalReaders runs the event store reads of resuming subscribers; a bounded pool whose
     *                       rejection answers 503
     */
    public EventStreamHandler(Hub hub, Authorizer authorizer, StreamSupervisor supervisor, Executor writers,
                              int queueCapacity, int sendBufferBytes, EventJournal journal,
                              Executor journalReaders, int journalPageEvents) {
        this.hub = hub;
        this.authorizer = authorizer;
        this.supervisor = supervisor;
        this.writers = writers;
        this.queueCapacity = queueCapacity;
        this.sendBufferBytes = sendBufferBytes;
        this.journal = journal;
        this.journalReaders = journalReaders;
        this.journalPageEvents = journalPageEvents;
    }

    @Override
    public RequestExecutorProvider getRequestExecutorProvider() {
        return sameThread;
    }

    @Override
    public void service(Request request, Response response) throws IOException {
        try {
            open(request, response);
        } catch (RequestException e) {
            ErrorResponses.write(response, e.status(), e.exceptionType(), e.getMessage(), PATH, null);
        } catch (HubUnavailableException e) {
            ErrorResponses.write(response, 503, "UNAVAILABLE", e.getMessage(), PATH, 1);
        }
    }

    private void open(Request request, Response response) {
        if (request.getMethod() != Method.GET) {
            response.setHeader("Allow", "GET");
            throw new RequestException(405, "INVALID_PARAMETER", "use GET to subscribe to events");
        }
        Set<String> topicKeys = topicKeys(request.getParameterValues("eventType"));
        Caller caller = Caller.of(request);
        for (String topicKey : topicKeys) {
            authorizer.requireSubscribe(caller, caller.systemName(), topicKey);
        }
        SubscriberFilter filter = new SubscriberFilter(
                authorizedSources(caller, sources(request.getParameterValues("source"))), metaData(request));
        OptionalLong afterId = lastEventId(request);

        if (!supervisor.reserve()) {
            throw new HubUnavailableException("the Event Handler already serves its maximum of "
                    + supervisor.maxStreams() + " subscribers (subscriber.max-count)");
        }
        SubscriberQueue subscriber = new SubscriberQueue(topicKeys, filter, response, queueCapacity, sendBufferBytes, writers,
                supervisor::closed);
        Replay replay;
        try {
            replay = hub.subscribe(topicKeys, subscriber, afterId);
        } catch (RuntimeException e) {
            supervisor.release();
            throw e;
        }
        supervisor.opened(subscriber);
        try {
            response.setStatus(200);
            response.setContentType("text/event-stream");
            response.setCharacterEncoding("UTF-8");
            response.setHeader("Cache-Control", "no-cache");
            response.setHeader("X-Accel-Buffering", "no");
            response.suspend();
            if (replay.needsJournal()) {
                resumeFromJournal(subscriber, topicKeys, filter, replay);
            } else {
                subscriber.start(opening(afterId, replay), gapNotice(replay.gap()), replay.events());
            }
        } catch (RuntimeException e) {
            // Registered but never started: take it out of its topics and give its place back.
            subscriber.close(DisconnectReason.WRITE_FAILED);
            throw e;
        }
    }

    private void resumeFromJournal(SubscriberQueue subscriber, Set<String> topicKeys, SubscriberFilter filter,
                                   Replay replay) {
        try {
            journalReaders.execute(() -> {
                try {
                    startFromJournal(subscriber, topicKeys, filter, replay);
                } catch (HubUnavailableException e) {
                    subscriber.refuse(PATH, e.getMessage());
                } catch (RuntimeException e) {
                    LOG.error("reading the event store for a resuming subscriber failed", e);
                    subscriber.refuse(PATH, "the event store could not be read; resume again later");
                }
            });
        } catch (RejectedExecutionException e) {
            subscriber.refuse(PATH, "too many subscribers are resuming from the event store at once;"
                    + " resume again later");
        }
    }

    private void startFromJournal(SubscriberQueue subscriber, Set<String> topicKeys, SubscriberFilter filter,
                                  Replay replay) {
        long afterId = replay.journalAfterId();
        EventJournal.LogPage page = journal.read(afterId, replay.journalUpToId(), topicKeys, filter,
                journalPageEvents);
        PublishedEvent gap = gapNotice(page.missingUpTo() > afterId ? new ReplayGap(afterId, page.missingUpTo()) : null);
        if (!page.complete()) {
            subscriber.startPage(OPENING_RESUMED, gap, page.events(),
                    PublishedEvent.control("id: " + page.lastReadId() + "\n\n"));
            return;
        }
        List<PublishedEvent> events = new ArrayList<>(page.events().size() + replay.events().size());
        events.addAll(page.events());
        events.addAll(replay.events());
        subscriber.start(OPENING_RESUMED, gap, events);
    }

    private static Set<String> topicKeys(String[] eventTypes) {
        if (eventTypes == null || eventTypes.length == 0) {
            throw RequestException.invalidParameter("at least one eventType query parameter is required,"
                    + " as in /eventhandler/events?eventType=temperature");
        }
        Set<String> keys = new LinkedHashSet<>();
        for (String eventType : eventTypes) {
            String problem = EventValidator.eventTypeProblem(eventType);
            if (problem != null) {
                throw RequestException.invalidParameter(problem);
            }
            keys.add(eventType.toLowerCase(Locale.ROOT));
        }
        return keys;
    }

    private static Set<String> sources(String[] sources) {
        Set<String> keys = new LinkedHashSet<>();
        if (sources != null) {
            for (String source : sources) {
                if (source.isBlank()) {
                    throw RequestException.invalidParameter("source may not be empty");
                }
                keys.add(source.toLowerCase(Locale.ROOT));
            }
        }
        return keys;
    }

    /** The sources the caller asked for, narrowed to the publishers it is authorized for. */
    private Set<String> authorizedSources(Caller caller, Set<String> requested) {
        if (caller.anonymous()) {
            return requested;
        }
        Optional<Set<String>> authorized = authorizer.authorizedPublishers(caller.systemName());
        if (authorized.isEmpty()) {
            return requested;
        }
        Set<String> sources = new LinkedHashSet<>(authorized.get());
        if (!requested.isEmpty()) {
            sources.retainAll(requested);
        }
        if (sources.isEmpty()) {
            throw RequestException.forbidden("the Authorization system authorizes system '" + caller.systemName()
                    + "' to receive events from " + (requested.isEmpty() ? "no publisher"
                    : "none of the sources " + requested) + " (or it cannot be reached)");
        }
        return sources;
    }

    private static Map<String, String> metaData(Request request) {
        Map<String, String> wanted = new HashMap<>();
        for (String name : request.getParameterNames()) {
            if (name.startsWith(META_PREFIX)) {
                String key = name.substring(META_PREFIX.length());
                String[] values = request.getParameterValues(name);
                if (key.isEmpty()) {
                    throw RequestException.invalidParameter("a metadata filter needs a key, as in meta.unit=celsius");
                }
                if (values.length > 1) {
                    throw RequestException.invalidParameter("metadata filter " + name + " is given "
                            + values.length + " times; an event has one value per key");
                }
                wanted.put(key, values[0].toLowerCase(Locale.ROOT));
            } else if (!name.equals("eventType") && !name.equals("source") && !name.equals("lastEventId")) {
                throw RequestException.invalidParameter("unknown query parameter '" + name
                        + "'; known: eventType, source, meta.KEY, lastEventId");
            }
        }
        return wanted;
    }

    /**
     * The header wins over the parameter: a browser's EventSource reconnects to the same URL (with the
     * first {@code lastEventId}) and sends the latest id in the header.
     */
    private static OptionalLong lastEventId(Request request) {
        String[] parameters = request.getParameterValues("lastEventId");
        if (parameters != null && parameters.length > 1) {
            throw RequestException.invalidParameter("lastEventId is given " + parameters.length
                    + " times; a stream resumes from one id");
        }
        String header = request.getHeader("Last-Event-ID");
        String value = header != null && !header.isBlank() ? header.trim() : parameters == null ? null : parameters[0];
        if (value == null) {
            return OptionalLong.empty();
        }
        try {
            long id = Long.parseLong(value);
            if (id >= 0) {
                return OptionalLong.of(id);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw RequestException.invalidParameter("Last-Event-ID / lastEventId must be an event id"
                + " (a whole number of 0 or more), not '" + value + "'");
    }

    /**
     * A new stream opens with the id of the last event before it, an SSE frame without data that sets the
     * client's last event id (a browser's EventSource too): a client that loses the connection before its
     * first event then resumes from there instead of losing what was published in between. A resumed stream
     * opens without one, so that a client cut off during the replay resumes where the replay got to.
     */
    private static PublishedEvent opening(OptionalLong afterId, Replay replay) {
        return afterId.isPresent() ? OPENING_RESUMED : PublishedEvent.control(":ok\nid: " + replay.liveAfterId() + "\n\n");
    }

    private static PublishedEvent gapNotice(ReplayGap gap) {
        if (gap == null) {
            return null;
        }
        try {
            return PublishedEvent.control("event: " + ReplayGap.EVENT_TYPE + "\ndata: "
                    + JsonMapper.get().writeValueAsString(gap) + "\n\n");
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}

package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.StreamOpening;
import eu.arrowhead.eventhandler.protocol.ErrorBodies;
import eu.arrowhead.eventhandler.protocol.EventTypeRule;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.SseFrames;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.Caller;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.Replay;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * <p>A request that cannot be served now (a limit reached, shutting down, the event store unreadable or too
 * busy for a resume) is answered with the {@link StreamRefusal}, a 200 stream that makes standard SSE clients
 * come back after {@code sse.retry-millis}, never with a 503, which they take as final. Bad requests stay 4xx.
 *
 * <p>In secure mode the caller subscribes as itself: {@link Authorizer#requireSubscribe} for each event
 * type. When the Authorization system names the publishers a subscriber may receive from, the stream
 * carries only theirs (the intersection with its own {@code source} filter, if any; 403 if that is empty);
 * in insecure mode, where no certificate names the subscriber, its {@code subscriber} parameter does. An
 * authorization update decides them again while the stream is open ({@link StreamAuthorization}).
 */
public final class EventStreamHandler extends HttpHandler {
    public static final String PATH = "/eventhandler/events";
    private static final Logger LOG = LoggerFactory.getLogger(EventStreamHandler.class);
    private static final String META_PREFIX = "meta.";
    private static final int MAX_NAME_LENGTH = 255;

    private final Hub hub;
    private final Authorizer authorizer;
    private final StreamAuthorization authorization;
    private final StreamSupervisor supervisor;
    private final Executor writers;
    private final int sendBufferBytes;
    private final EventLog journal;
    private final ReplayQueue replays;
    private final ReplayPace replayPace;
    private final int journalPageEvents;
    private final Duration retry;
    private final StreamRefusal refusal;
    /** How a resumed stream opens: no id, so that a client cut off during the replay resumes where it got to. */
    private final PublishedEvent openingResumed;
    private final RequestExecutorProvider sameThread = new RequestExecutorProvider.SameThreadProvider();

    /**
     * @param journalReaders       runs the event store reads of resuming subscribers; a bounded pool whose
     *                             rejection refuses the stream for now
     * @param replayQueuePerClient {@code store.replay-queue-per-client}: resumes one client may have waiting
     * @param replayEventsPerSecond {@code store.replay-events-per-second}: the readers' pace, 0 for none
     * @param retry                {@code sse.retry-millis}, announced at every stream's open and in refusals
     */
    public EventStreamHandler(Hub hub, Authorizer authorizer, StreamAuthorization authorization,
                              StreamSupervisor supervisor, Executor writers, int sendBufferBytes, EventLog journal,
                              Executor journalReaders, int replayQueuePerClient, int replayEventsPerSecond,
                              int journalPageEvents, Duration retry) {
        this.hub = hub;
        this.authorizer = authorizer;
        this.authorization = authorization;
        this.supervisor = supervisor;
        this.writers = writers;
        this.sendBufferBytes = sendBufferBytes;
        this.journal = journal;
        this.replays = new ReplayQueue(journalReaders, replayQueuePerClient);
        this.replayPace = new ReplayPace(replayEventsPerSecond);
        this.journalPageEvents = journalPageEvents;
        this.retry = retry;
        this.refusal = new StreamRefusal(retry);
        this.openingResumed = PublishedEvent.control(SseFrames.resumedOpening(retry));
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
            ErrorBodies.write(response, e.status(), e.exceptionType(), e.getMessage(), PATH, null);
        } catch (UnavailableException e) {
            refusal.write(response, PATH, e.getMessage());
        }
    }

    private void open(Request request, Response response) {
        if (request.getMethod() != Method.GET) {
            response.setHeader("Allow", "GET");
            throw new RequestException(405, ExceptionType.INVALID_PARAMETER, "use GET to subscribe to events");
        }
        Set<String> topicKeys = topicKeys(request.getParameterValues("eventType"));
        Caller caller = Caller.of(request);
        String subscriberName = subscriberName(caller,
                request.getParameterValues(PublisherAuthorization.SUBSCRIBER_PARAMETER));
        for (String topicKey : topicKeys) {
            authorizer.requireSubscribe(caller, subscriberName, topicKey);
        }
        StreamRequest wanted = new StreamRequest(subscriberName, sources(request.getParameterValues("source")),
                metaData(request));
        long rulesGeneration = authorization.generation();
        SubscriberFilter filter = authorization.filterAtOpen(wanted);
        OptionalLong afterId = lastEventId(request);

        SubscriberQueue subscriber = supervisor.admit(StreamHeap.charge(request),
                heapCharge -> suspendedStream(topicKeys, wanted, filter, rulesGeneration, response, heapCharge));
        try {
            // Known to the supervisor now, where every later authorization update finds it; one that came while
            // its filter was decided did not, and is caught up with before it receives anything.
            authorization.catchUp(subscriber, rulesGeneration);
            Replay replay;
            try {
                replay = hub.subscribe(topicKeys, subscriber, afterId);
            } catch (UnavailableException e) {
                subscriber.refuse(e.getMessage());
                return;
            }
            if (replay.needsJournal()) {
                String client = caller.anonymous() ? request.getRemoteAddr() : caller.systemName();
                resumeFromJournal(client, subscriber, topicKeys, replay);
            } else {
                subscriber.start(opening(afterId, replay), gapNotice(replay.gap()), replay.events());
            }
        } catch (RuntimeException e) {
            // Never started: take it out of its topics and give its place back.
            subscriber.close(DisconnectReason.WRITE_FAILED);
            throw e;
        }
    }

    /**
     * The stream with its response readied and suspended: from when the supervisor knows it, a refusal (an
     * overflow before the start, a shutdown) may come from another thread, and gives the place back in one way.
     */
    private SubscriberQueue suspendedStream(Set<String> topicKeys, StreamRequest wanted, SubscriberFilter filter,
                                            long rulesGeneration, Response response, long heapCharge) {
        SubscriberQueue subscriber = new SubscriberQueue(topicKeys, wanted, filter, rulesGeneration,
                new GrizzlyStreamPort(response, sendBufferBytes), heapCharge, supervisor.queueBudget(), writers,
                supervisor::closed, refusal);
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        response.suspend();
        return subscriber;
    }

    /**
     * Queues the resume for a reader and opens its stream meanwhile, so that it gets its {@code :ok} and
     * heartbeats while it waits. Refuses it at once when the store already knows that it cannot serve it (its
     * database is down), rather than after a read that would wait for the database's timeout while live events
     * pile up, and when the client already has its share of the readers' queue.
     */
    private void resumeFromJournal(String client, SubscriberQueue subscriber, Set<String> topicKeys,
                                   Replay replay) {
        try {
            journal.requireReadable(replay.journalAfterId(), replay.journalUpToId());
            boolean queued = replays.submit(client, () -> {
                try {
                    startFromJournal(subscriber, topicKeys, replay);
                } catch (UnavailableException e) {
                    subscriber.refuse(e.getMessage());
                } catch (RuntimeException e) {
                    LOG.error("reading the event store for a resuming subscriber failed", e);
                    subscriber.refuse("the event store could not be read; resume again later");
                }
            });
            if (queued) {
                subscriber.openAhead(openingResumed);
            } else {
                subscriber.refuse("this client already has as many resumes waiting for the event store as it may"
                        + " (store.replay-queue-per-client); resume again later");
            }
        } catch (UnavailableException e) {
            subscriber.refuse(e.getMessage());
        } catch (RejectedExecutionException e) {
            subscriber.refuse("too many subscribers are resuming from the event store at once;"
                    + " resume again later");
        }
    }

    private void startFromJournal(SubscriberQueue subscriber, Set<String> topicKeys, Replay replay) {
        if (!subscriber.clientConnected()) {
            // Gone while it waited for a reader: its page would be read for nobody, ahead of the others.
            subscriber.close(DisconnectReason.CLIENT_CLOSED);
            return;
        }
        if (subscriber.closing()) {
            // Refused meanwhile (its live queue overflowed): the refusal, already under way, ends the stream.
            return;
        }
        // The filter in effect now: an authorization update may have changed it while the resume waited.
        EventLog.LogPage page = journal.read(replay.journalAfterId(), replay.journalUpToId(), topicKeys,
                subscriber.filter(), journalPageEvents);
        List<PublishedEvent> frames = withGapNotices(page.events(), page.gaps());
        if (!page.complete()) {
            long last = page.lastReadId();
            subscriber.startPage(openingResumed, null, frames, PublishedEvent.control(SseFrames.pageEnd(last)));
        } else {
            frames.addAll(replay.events());
            subscriber.start(openingResumed, null, frames);
        }
        replayPace.replayed(page.events().size());
    }

    /**
     * The events with a replay-gap notice for each hole where it lies: after the events before it, before the
     * events after it, so that a client knows exactly which of its events the hole may have held.
     */
    private static List<PublishedEvent> withGapNotices(List<PublishedEvent> events, List<ReplayGap> gaps) {
        List<PublishedEvent> frames = new ArrayList<>(events.size() + gaps.size());
        int next = 0;
        for (ReplayGap gap : gaps) {
            while (next < events.size() && events.get(next).id() <= gap.requestedAfterId()) {
                frames.add(events.get(next++));
            }
            frames.add(gapNotice(gap));
        }
        frames.addAll(events.subList(next, events.size()));
        return frames;
    }

    private static Set<String> topicKeys(String[] eventTypes) {
        if (eventTypes == null || eventTypes.length == 0) {
            throw RequestException.invalidParameter("at least one eventType query parameter is required,"
                    + " as in /eventhandler/events?eventType=temperature");
        }
        Set<String> keys = new LinkedHashSet<>();
        for (String eventType : eventTypes) {
            String problem = EventTypeRule.problem(eventType);
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

    /**
     * The system the stream is for, lower case as every identity: the one its {@code subscriber} parameter
     * names, else the caller's identity (none in insecure mode). In secure mode the authorizer checks that
     * they are the same.
     */
    private static String subscriberName(Caller caller, String[] named) {
        if (named == null) {
            return caller.systemName();
        }
        if (named.length > 1 || named[0].isBlank() || named[0].length() > MAX_NAME_LENGTH) {
            throw RequestException.invalidParameter(PublisherAuthorization.SUBSCRIBER_PARAMETER
                    + " names one system: once, 1 to " + MAX_NAME_LENGTH + " characters");
        }
        return named[0].toLowerCase(Locale.ROOT);
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
            } else if (!name.equals("eventType") && !name.equals("source") && !name.equals("lastEventId")
                    && !name.equals(PublisherAuthorization.SUBSCRIBER_PARAMETER)) {
                throw RequestException.invalidParameter("unknown query parameter '" + name
                        + "'; known: eventType, source, meta.KEY, lastEventId, subscriber");
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
     * A new stream opens with the {@link StreamOpening} notice: the id of the last event before it, in a
     * frame with data (which every mainstream client takes as its last event id) and a type of its own
     * (which a browser's {@code onmessage} does not see). A client that loses the connection before its
     * first event then resumes from there instead of losing what was published in between.
     */
    private PublishedEvent opening(OptionalLong afterId, Replay replay) {
        if (afterId.isPresent()) {
            return openingResumed;
        }
        long id = replay.liveAfterId();
        return PublishedEvent.control(SseFrames.opening(retry, id));
    }

    private static PublishedEvent gapNotice(ReplayGap gap) {
        if (gap == null) {
            return null;
        }
        return PublishedEvent.control(SseFrames.gap(gap));
    }
}

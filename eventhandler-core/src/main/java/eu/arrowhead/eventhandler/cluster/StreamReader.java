package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.topic.EventLog.LogPage;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.MessageGetRequest;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads the stream for resumes older than the replay windows and for {@code mgmt/events}: an ordered consumer of
 * its own per read, from the first sequence wanted, on the subject of the one topic asked for (or all of them),
 * ended when the read is. A read that starts before the stream's first sequence (retention removed those
 * events) reports the ids it lacks as a gap. Blocking: called on the store's reader threads.
 */
final class StreamReader {
    /** JetStream's error code for a subject without messages. */
    private static final int NO_MESSAGE = 10037;
    private final ClusterConnection connection;
    private final JetStream jetStream;
    private final JetStreamManagement management;
    private final String stream;
    private final StreamMessages messages;
    private final Duration timeout;

    StreamReader(ClusterConnection connection, String stream, StreamMessages messages, Duration timeout)
            throws IOException {
        this.connection = connection;
        this.jetStream = connection.jetStream(timeout);
        this.management = connection.management(timeout);
        this.stream = stream;
        this.messages = messages;
        this.timeout = timeout;
    }

    /** See {@link eu.arrowhead.eventhandler.topic.EventLog#read}. */
    LogPage read(long afterId, long upToId, Set<String> topicKeys, SubscriberFilter filter, int maxEvents) {
        long first = firstSequence();
        List<ReplayGap> gaps = new ArrayList<>();
        if (first > afterId + 1) {
            gaps.add(new ReplayGap(afterId, Math.min(first - 1, upToId)));
        }
        List<PublishedEvent> events = new ArrayList<>();
        long from = Math.max(afterId + 1, first);
        if (from > upToId) {
            return new LogPage(events, gaps, true, upToId);
        }
        Scan scan = new Scan(from, upToId, topicKeys, maxEvents) {
            @Override
            void accept(long id, IncomingEvent event) {
                PublishedEvent published = PublishedEvent.logged(id, event);
                if (filter.matches(published)) {
                    events.add(published);
                }
            }
        };
        long lastRead = scan.run();
        return scan.complete ? new LogPage(events, gaps, true, upToId) : new LogPage(events, gaps, false, lastRead);
    }

    /** See {@link EventStore#query}. */
    List<EventStore.LoggedEvent> query(Set<String> topicKeys, Long fromMillis, Long toMillis, long afterId,
                                       int limit) {
        List<EventStore.LoggedEvent> found = new ArrayList<>();
        long from = Math.max(afterId + 1, firstSequence());
        // Scanned in pages of the limit: a time filter may pass few of the events read.
        while (found.size() < limit) {
            List<EventStore.LoggedEvent> page = new ArrayList<>();
            Scan scan = new Scan(from, Long.MAX_VALUE, topicKeys, limit) {
                @Override
                void accept(long id, IncomingEvent event) {
                    if ((fromMillis == null || event.timeStampMillis() >= fromMillis)
                            && (toMillis == null || event.timeStampMillis() <= toMillis)) {
                        page.add(new EventStore.LoggedEvent(id, EventEncoding.withId(id, event.json())));
                    }
                }
            };
            long lastRead = scan.run();
            found.addAll(page.subList(0, Math.min(page.size(), limit - found.size())));
            if (scan.complete || lastRead < from) {
                break;
            }
            from = lastRead + 1;
        }
        return found;
    }

    /**
     * The event of one id, or {@code null} if the stream no longer holds it (retention deleted it) or it is no event.
     *
     * @throws UnavailableException if the stream cannot be read now
     */
    IncomingEvent event(long id) {
        MessageInfo message = message(MessageGetRequest.forSequence(id));
        try {
            return message == null ? null : messages.decode(message.getHeaders(), message.getData());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * The id of the first event of a topic after {@code afterId}, or 0 if there is none.
     *
     * @throws UnavailableException if the stream cannot be read now
     */
    long nextOfTopic(long afterId, String topicKey) {
        MessageInfo message = message(MessageGetRequest.nextForSubject(afterId + 1, messages.subject(topicKey)));
        return message == null ? 0 : message.getSeq();
    }

    /** The sequence of the last message of {@code stream} on one {@code subject} now; 0 if there is none. */
    static long lastOfSubject(JetStreamManagement management, String stream, String subject)
            throws IOException, JetStreamApiException {
        try {
            return management.getLastMessage(stream, subject).getSeq();
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == NO_MESSAGE) {
                return 0;
            }
            throw e;
        }
    }

    /** One message of the stream, or {@code null}: there is none such. */
    private MessageInfo message(MessageGetRequest request) {
        requireUp();
        try {
            return management.getMessage(stream, request);
        } catch (IOException | JetStreamApiException e) {
            if (e instanceof JetStreamApiException answer && answer.getApiErrorCode() == NO_MESSAGE) {
                return null;
            }
            throw new UnavailableException("the cluster's stream cannot be read now (" + e.getMessage() + ")");
        }
    }

    /** The first id the stream still holds: those before it retention deleted. */
    long firstSequence() {
        requireUp();
        try {
            return management.getStreamInfo(stream).getStreamState().getFirstSequence();
        } catch (IOException | JetStreamApiException e) {
            throw new UnavailableException("the cluster's stream cannot be read now (" + e.getMessage()
                    + "); resume again later");
        }
    }

    private void requireUp() {
        ClusterConnection.CutOff cutOff = connection.cutOff();
        if (cutOff != null) {
            throw new UnavailableException("this node " + cutOff.why() + "; resume on another node");
        }
    }

    /**
     * One pass over the stream from a sequence: at most {@code maxEvents} messages, up to {@code upToId}, or to
     * the stream's end, whichever comes first.
     */
    private abstract class Scan {
        private final long from;
        private final long upToId;
        private final Set<String> topicKeys;
        private final int maxEvents;
        /** Whether the scan reached {@code upToId} or the stream's end. */
        boolean complete;

        Scan(long from, long upToId, Set<String> topicKeys, int maxEvents) {
            this.from = from;
            this.upToId = upToId;
            this.topicKeys = topicKeys;
            this.maxEvents = maxEvents;
        }

        abstract void accept(long id, IncomingEvent event);

        /** @return the sequence of the last message read, or {@code from - 1} if none */
        long run() {
            String subject = topicKeys.size() == 1 ? messages.subject(topicKeys.iterator().next())
                    : messages.allSubjects();
            PushSubscribeOptions options = PushSubscribeOptions.builder().stream(stream).ordered(true)
                    .configuration(ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.ByStartSequence)
                            .startSequence(from).build())
                    .build();
            long lastRead = from - 1;
            JetStreamSubscription subscription = null;
            try {
                long last = lastSequence(subject);
                if (last < from) {
                    complete = true;
                    return lastRead;
                }
                subscription = jetStream.subscribe(subject, options);
                for (int read = 0; read < maxEvents; read++) {
                    Message message = subscription.nextMessage(timeout);
                    if (message == null) {
                        throw new UnavailableException("the cluster's stream sent nothing for " + timeout.toSeconds()
                                + " s (cluster.timeout-seconds); resume again later");
                    }
                    long id = message.metaData().streamSequence();
                    if (id > upToId) {
                        complete = true;
                        return lastRead;
                    }
                    lastRead = id;
                    decodeInto(message, id);
                    if (id >= Math.min(upToId, last) || message.metaData().pendingCount() == 0) {
                        complete = true;
                        return lastRead;
                    }
                }
                return lastRead;
            } catch (IOException | JetStreamApiException e) {
                throw new UnavailableException("the cluster's stream cannot be read now (" + e.getMessage()
                        + "); resume again later");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UnavailableException("the Event Handler is shutting down");
            } finally {
                if (subscription != null) {
                    try {
                        subscription.unsubscribe();
                    } catch (IllegalStateException e) {
                        // the connection is closing: the server forgets the consumer by itself
                    }
                }
            }
        }

        /** The sequence of the last message on {@code subject} now; 0 if there is none. */
        private long lastSequence(String subject) throws IOException, JetStreamApiException {
            if (subject.equals(messages.allSubjects())) {
                return management.getStreamInfo(stream).getStreamState().getLastSequence();
            }
            return lastOfSubject(management, stream, subject);
        }

        private void decodeInto(Message message, long id) {
            IncomingEvent event;
            try {
                event = messages.decode(message.getHeaders(), message.getData());
            } catch (IllegalArgumentException e) {
                return;
            }
            if (topicKeys.isEmpty() || topicKeys.contains(event.topicKey())) {
                accept(id, event);
            }
        }
    }
}

package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import eu.arrowhead.eventhandler.topic.ReadScope;
import io.nats.client.Message;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;

/**
 * How an event is kept in the stream: its JSON with id 0 as the message's data (what the validator encoded;
 * the stream's sequence is its id), on the subject of its topic, and what the hub needs to route and filter
 * it as headers, so that a node delivering it parses nothing but the metadata of events that have some.
 */
final class StreamMessages {
    /** JetStream's own header: a message with the id of one in the duplicate window is not stored again. */
    static final String MSG_ID = "Nats-Msg-Id";
    static final String FINGERPRINT = "EH-Request";
    private static final String TYPE = "EH-Type";
    private static final String SOURCE = "EH-Source";
    private static final String TIME = "EH-Time";
    private static final String HAS_METADATA = "EH-Meta";

    private final String subjectPrefix;

    StreamMessages(String subjectPrefix) {
        this.subjectPrefix = subjectPrefix;
    }

    /** Every subject of the stream. */
    String allSubjects() {
        return subjectPrefix + ".>";
    }

    /**
     * The subject of the placeholders a migration stores for ids the single node's log does not hold, and deletes
     * at once ({@link LogMigration}): no topic's, since event types hold no {@code %}.
     */
    String fillerSubject() {
        return subjectPrefix + ".%filler";
    }

    /** The subject that covers the topics of {@code scope}: one filter subject, as nats-server 2.9 takes. */
    String subjectOf(ReadScope scope) {
        return scope.readsEveryTopic() || scope.topicKeys().size() != 1 ? allSubjects()
                : subject(scope.topicKeys().iterator().next());
    }

    /**
     * The subject of a topic. Event types may hold dots, which NATS reads as token separators: written as
     * {@code %2E} (event types hold no {@code %}), so that every type is one token and a subject names one topic.
     */
    String subject(String topicKey) {
        return subjectPrefix + '.' + topicKey.replace(".", "%2E");
    }

    /**
     * The message of an event.
     *
     * @param messageId   the {@link #MSG_ID} of a publish with an {@code Idempotency-Key}, or {@code null}
     * @param fingerprint the request's fingerprint, kept with a {@code messageId}: a repeat that is another request
     *                    is told apart by it
     */
    Message encode(IncomingEvent event, String messageId, long fingerprint) {
        Headers headers = headers(event);
        if (messageId != null) {
            headers.put(MSG_ID, messageId);
            headers.put(FINGERPRINT, Long.toHexString(fingerprint));
        }
        return NatsMessage.builder().subject(subject(event.topicKey())).headers(headers).data(event.json()).build();
    }

    /** The message of an event a migration copies ({@link LogMigration}), with its {@link #MSG_ID}. */
    Message encodeMigrated(IncomingEvent event, String messageId) {
        Headers headers = headers(event);
        headers.put(MSG_ID, messageId);
        return NatsMessage.builder().subject(subject(event.topicKey())).headers(headers).data(event.json()).build();
    }

    private static Headers headers(IncomingEvent event) {
        Headers headers = new Headers();
        headers.put(TYPE, event.eventType());
        headers.put(TIME, Long.toString(event.timeStampMillis()));
        if (event.sourceKey() != null) {
            headers.put(SOURCE, event.sourceKey());
        }
        if (!event.metaData().isEmpty()) {
            headers.put(HAS_METADATA, "1");
        }
        return headers;
    }

    /**
     * The event a message of the stream holds.
     *
     * @throws IllegalArgumentException if it was not written by {@link #encode} (another writer on the subjects)
     */
    IncomingEvent decode(Headers headers, byte[] data) {
        String type = headers == null ? null : headers.getFirst(TYPE);
        String time = headers == null ? null : headers.getFirst(TIME);
        if (type == null || time == null || data == null) {
            throw new IllegalArgumentException("a message without the Event Handler's headers");
        }
        Map<String, String> metaData = Map.of();
        if (headers.getFirst(HAS_METADATA) != null) {
            try {
                metaData = EventEncoding.metaData(new String(data, java.nio.charset.StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalArgumentException("a message whose data is not an event: " + e.getMessage(), e);
            }
        }
        return new IncomingEvent(type, type.toLowerCase(Locale.ROOT), headers.getFirst(SOURCE), metaData,
                Long.parseLong(time), data);
    }
}

package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * One row of the event log. The id is the event's id in the global sequence, given by the event log: no
 * IDENTITY column, so inserts can be batched.
 */
@Entity
@Table(name = "eh_event")
class EventRecord {
    @Id
    @Column(name = "id")
    private long id;

    @Column(name = "event_type", nullable = false)
    private String eventType;

    /** The event type in lower case: topics match case-insensitively. */
    @Column(name = "topic_key", nullable = false)
    private String topicKey;

    /** The source system's name in lower case, for source filters; null without a source. */
    @Column(name = "source_key")
    private String sourceKey;

    @Column(name = "time_stamp_ms", nullable = false)
    private long timeStampMillis;

    /** The event exactly as delivered: the data of its SSE frame. */
    @Column(name = "event_json", nullable = false)
    private String json;

    protected EventRecord() {
    }

    private EventRecord(long id, String eventType, String topicKey, String sourceKey, long timeStampMillis, String json) {
        this.id = id;
        this.eventType = eventType;
        this.topicKey = topicKey;
        this.sourceKey = sourceKey;
        this.timeStampMillis = timeStampMillis;
        this.json = json;
    }

    /** The row of an event the hub encoded with id 0 ({@link IncomingEvent#json}), with its real id. */
    static EventRecord of(long id, IncomingEvent event) {
        return new EventRecord(id, event.eventType(), event.topicKey(), event.sourceKey(), event.timeStampMillis(),
                EventEncoding.withId(id, event.json()));
    }

    long id() {
        return id;
    }

    String eventType() {
        return eventType;
    }

    String topicKey() {
        return topicKey;
    }

    String sourceKey() {
        return sourceKey;
    }

    long timeStampMillis() {
        return timeStampMillis;
    }

    String json() {
        return json;
    }
}

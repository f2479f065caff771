package eu.arrowhead.eventhandler.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;

/** An event set aside from a push subscription's cursor (see {@link SubscriptionStore.DeadLetter}). */
@Entity
@Table(name = "eh_push_dead_letter")
@IdClass(DeadLetterRecord.Key.class)
class DeadLetterRecord {
    @Id
    @Column(name = "subscription_id")
    private long subscriptionId;

    @Id
    @Column(name = "event_id")
    private long eventId;

    @Column(name = "event_type", nullable = false)
    private String eventType;

    @Column(name = "status", nullable = false)
    private int status;

    @Column(name = "answer", nullable = false)
    private String answer;

    @Column(name = "dead_at_ms", nullable = false)
    private long atMillis;

    protected DeadLetterRecord() {
    }

    DeadLetterRecord(SubscriptionStore.DeadLetter letter) {
        this.subscriptionId = letter.subscriptionId();
        this.eventId = letter.eventId();
        this.eventType = letter.eventType();
        this.status = letter.status();
        this.answer = letter.answer();
        this.atMillis = letter.atMillis();
    }

    SubscriptionStore.DeadLetter letter() {
        return new SubscriptionStore.DeadLetter(subscriptionId, eventId, eventType, status, answer, atMillis);
    }

    /** The primary key: one letter per subscription and event. */
    static final class Key implements Serializable {
        private static final long serialVersionUID = 1L;

        private long subscriptionId;
        private long eventId;

        Key() {
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Key key && key.subscriptionId == subscriptionId && key.eventId == eventId;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(subscriptionId) * 31 + Long.hashCode(eventId);
        }
    }
}

package eu.arrowhead.eventhandler.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A push subscription's cursor in the log (see {@link SubscriptionStore#saveCursors}). */
@Entity
@Table(name = "eh_push_cursor")
class CursorRecord {
    @Id
    @Column(name = "subscription_id")
    private long subscriptionId;

    @Column(name = "acknowledged_id", nullable = false)
    private long acknowledgedId;

    protected CursorRecord() {
    }

    CursorRecord(long subscriptionId, long acknowledgedId) {
        this.subscriptionId = subscriptionId;
        this.acknowledgedId = acknowledgedId;
    }

    long subscriptionId() {
        return subscriptionId;
    }

    long acknowledgedId() {
        return acknowledgedId;
    }
}

package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.topic.PublishKey;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A keyed publish's row, written with its events (see {@link StoredKey}). */
@Entity
@Table(name = "eh_publish_key")
class PublishKeyRecord {
    @Id
    @Column(name = "first_id")
    private long firstId;

    @Column(name = "caller", nullable = false)
    private String caller;

    @Column(name = "idempotency_key", nullable = false)
    private String idempotencyKey;

    @Column(name = "fingerprint", nullable = false)
    private long fingerprint;

    @Column(name = "event_count", nullable = false)
    private int count;

    @Column(name = "created_at_ms", nullable = false)
    private long createdMillis;

    protected PublishKeyRecord() {
    }

    PublishKeyRecord(StoredKey stored) {
        this.firstId = stored.firstId();
        this.caller = stored.key().scope();
        this.idempotencyKey = stored.key().key();
        this.fingerprint = stored.key().fingerprint();
        this.count = stored.count();
        this.createdMillis = stored.createdMillis();
    }

    StoredKey stored() {
        return new StoredKey(new PublishKey(caller, idempotencyKey, fingerprint), firstId, count, createdMillis);
    }
}

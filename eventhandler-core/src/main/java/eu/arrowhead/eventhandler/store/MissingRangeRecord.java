package eu.arrowhead.eventhandler.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A range of ids the log does not hold (see {@link MissingRanges}), kept across restarts. */
@Entity
@Table(name = "eh_missing_range")
class MissingRangeRecord {
    @Id
    @Column(name = "first_id")
    private long firstId;

    @Column(name = "last_id", nullable = false)
    private long lastId;

    protected MissingRangeRecord() {
    }

    MissingRangeRecord(MissingRanges.Range range) {
        this.firstId = range.first();
        this.lastId = range.last();
    }

    MissingRanges.Range range() {
        return new MissingRanges.Range(firstId, lastId);
    }
}

package eu.arrowhead.eventhandler.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A named number the log keeps across restarts and retention (see {@link EventDatabase.State}). */
@Entity
@Table(name = "eh_state")
class StateRecord {
    static final String LAST_ID = "last_id";
    static final String CLEAN_STOP = "clean_stop";
    /** Retention's low watermark: every event up to this id is deleted. */
    static final String MISSING_UP_TO = "missing_up_to";
    /** The ids the running store may have given out beyond its last commit; what a crash skips. */
    static final String LAG_BOUND = "lag_bound";
    /** Counts the writer's probes while writes fail (see {@link BatchSink#takesWrites}); means nothing else. */
    static final String WRITE_PROBE = "write_probe";

    @Id
    @Column(name = "name")
    private String name;

    @Column(name = "state_value", nullable = false)
    private long value;

    protected StateRecord() {
    }

    StateRecord(String name, long value) {
        this.name = name;
        this.value = value;
    }

    String name() {
        return name;
    }

    long value() {
        return value;
    }
}

package eu.arrowhead.eventhandler.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** One kept answer of the Authorization system (see {@link AuthorizationStore.StoredAnswer}). */
@Entity
@Table(name = "eh_authorization_answer")
class AnswerRecord {
    @Id
    @Column(name = "subscriber_key")
    private String subscriberKey;

    @Column(name = "checked_at_ms", nullable = false)
    private long checkedMillis;

    @Column(name = "answer_json", nullable = false)
    private String json;

    protected AnswerRecord() {
    }

    AnswerRecord(AuthorizationStore.StoredAnswer answer) {
        this.subscriberKey = answer.subscriberKey();
        this.checkedMillis = answer.checkedMillis();
        this.json = answer.json();
    }

    AuthorizationStore.StoredAnswer stored() {
        return new AuthorizationStore.StoredAnswer(subscriberKey, checkedMillis, json);
    }
}

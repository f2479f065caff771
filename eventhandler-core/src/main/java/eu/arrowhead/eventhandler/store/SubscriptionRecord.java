package eu.arrowhead.eventhandler.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** One push subscription (see {@link SubscriptionStore.StoredSubscription}). */
@Entity
@Table(name = "eh_push_subscription")
class SubscriptionRecord {
    @Id
    @Column(name = "id")
    private long id;

    @Column(name = "topic_key", nullable = false)
    private String topicKey;

    @Column(name = "subscriber_key", nullable = false)
    private String subscriberKey;

    @Column(name = "created_at_ms", nullable = false)
    private long createdMillis;

    @Column(name = "updated_at_ms", nullable = false)
    private long updatedMillis;

    @Column(name = "subscription_json", nullable = false)
    private String json;

    protected SubscriptionRecord() {
    }

    SubscriptionRecord(SubscriptionStore.StoredSubscription subscription) {
        this.id = subscription.id();
        this.topicKey = subscription.topicKey();
        this.subscriberKey = subscription.subscriberKey();
        this.createdMillis = subscription.createdMillis();
        this.updatedMillis = subscription.updatedMillis();
        this.json = subscription.json();
    }

    SubscriptionStore.StoredSubscription stored() {
        return new SubscriptionStore.StoredSubscription(id, topicKey, subscriberKey, createdMillis, updatedMillis,
                json);
    }
}

-- Arrowhead 4.x push subscriptions: one row per (event type, subscriber), ids given by the Event Handler.
CREATE TABLE eh_push_subscription (
    id                BIGINT       NOT NULL PRIMARY KEY,
    topic_key         VARCHAR(255) NOT NULL,
    subscriber_key    VARCHAR(255) NOT NULL,
    created_at_ms     BIGINT       NOT NULL,
    updated_at_ms     BIGINT       NOT NULL,
    subscription_json LONGTEXT     NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- Subscribing again replaces the subscription of the same event type and subscriber.
CREATE UNIQUE INDEX eh_push_subscription_key ON eh_push_subscription (topic_key, subscriber_key);

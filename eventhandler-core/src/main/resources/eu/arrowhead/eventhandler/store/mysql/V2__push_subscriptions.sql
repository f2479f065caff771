-- Arrowhead 4.x push subscriptions: one row per (event type, subscriber), ids given by the Event Handler.
-- One statement, and IF NOT EXISTS: MySQL commits each DDL statement at once, so a start that stopped
-- after the table was made but before the version was recorded must be able to run this again.
-- Subscribing again replaces the subscription of the same event type and subscriber (the unique key).
CREATE TABLE IF NOT EXISTS eh_push_subscription (
    id                BIGINT       NOT NULL PRIMARY KEY,
    topic_key         VARCHAR(255) NOT NULL,
    subscriber_key    VARCHAR(255) NOT NULL,
    created_at_ms     BIGINT       NOT NULL,
    updated_at_ms     BIGINT       NOT NULL,
    subscription_json LONGTEXT     NOT NULL,
    UNIQUE KEY eh_push_subscription_key (topic_key, subscriber_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Each push subscription's cursor in the log: the last event id its subscriber acknowledged (or needed no POST
-- for). Delivery goes on after it after a restart. One row per subscription, deleted with it; written once a
-- second while the subscriber acknowledges events, and when the subscription is made.
-- IF NOT EXISTS: MySQL commits a DDL statement at once, so a start that stopped after the table was made but
-- before the version was recorded must be able to run this again.
CREATE TABLE IF NOT EXISTS eh_push_cursor (
    subscription_id BIGINT NOT NULL PRIMARY KEY,
    acknowledged_id BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

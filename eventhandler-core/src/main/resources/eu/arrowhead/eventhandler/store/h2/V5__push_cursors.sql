-- Each push subscription's cursor in the log: the last event id its subscriber acknowledged (or needed no POST
-- for). Delivery goes on after it after a restart. One row per subscription, deleted with it; written once a
-- second while the subscriber acknowledges events, and when the subscription is made.
CREATE TABLE eh_push_cursor (
    subscription_id BIGINT NOT NULL PRIMARY KEY,
    acknowledged_id BIGINT NOT NULL
);

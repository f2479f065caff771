-- The event log: one row per accepted event, keyed by its id in the global sequence.
CREATE TABLE eh_event (
    id            BIGINT                 NOT NULL PRIMARY KEY,
    event_type    VARCHAR(255)           NOT NULL,
    topic_key     VARCHAR(255)           NOT NULL,
    source_key    VARCHAR(255),
    time_stamp_ms BIGINT                 NOT NULL,
    event_json    CHARACTER LARGE OBJECT NOT NULL
);
-- Replays and queries by topic, in id order.
CREATE INDEX eh_event_topic ON eh_event (topic_key, id);
-- Retention by age and queries by time.
CREATE INDEX eh_event_time ON eh_event (time_stamp_ms);

-- The sequence and the log's bounds, which must survive restarts and retention.
CREATE TABLE eh_state (
    name        VARCHAR(64) NOT NULL PRIMARY KEY,
    state_value BIGINT      NOT NULL
);
INSERT INTO eh_state (name, state_value) VALUES ('last_id', 0);
INSERT INTO eh_state (name, state_value) VALUES ('clean_stop', 0);
INSERT INTO eh_state (name, state_value) VALUES ('missing_up_to', 0);

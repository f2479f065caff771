-- Events a push subscriber refused for good (a 4xx other than 408 and 429, push.poison-retries more times),
-- set aside so that its cursor could go on: one row per subscription and event, at most push.dead-letter-max
-- per subscription (the oldest dropped), deleted with the subscription. Written in the cursors' transaction,
-- so that no cursor is kept past an event set aside that is not.
-- One statement, and IF NOT EXISTS: MySQL commits a DDL statement at once, so a start that stopped after the
-- table was made but before the version was recorded must be able to run this again.
CREATE TABLE IF NOT EXISTS eh_push_dead_letter (
    subscription_id BIGINT        NOT NULL,
    event_id        BIGINT        NOT NULL,
    event_type      VARCHAR(255)  NOT NULL,
    status          INT           NOT NULL,
    answer          VARCHAR(1024) NOT NULL,
    dead_at_ms      BIGINT        NOT NULL,
    PRIMARY KEY (subscription_id, event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
